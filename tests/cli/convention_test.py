#!/usr/bin/env python3
"""One CLI convention, checked on every command (docs/cli.md, "The convention").

The commands are read from `stepscope --help`; a command missing from CASES
below fails the test, so a new command must say how it is exercised. For each:

- `--help` exits 0, has an "Examples:" section, and no line is wider than 100
  columns with COLUMNS=100; `stepscope help CMD` prints the same;
- an unknown flag, and a missing input file, are exit 2 with one line on stderr;
- `-o` naming an existing file without `-f` is exit 2 and leaves the file
  untouched; with `-f` the file is replaced;
- `--format json` prints one object of named tables ({"name": [{...}, ...]});
  `--format csv` parses (several tables: sections headed "# name");
- `-q` leaves stderr empty on success;
- every command that reads a trace (the input CASES replaces with MISSING)
  answers a damaged SQLite file (cut short, garbage in its schema page, garbage
  in its table pages) with exit 2 and one line naming the file, and says once on
  stderr that a cut-off trace (meta.finalized = 0) was not finalized.

usage: convention_test.py BUILD_DIR
"""
import csv
import io
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import unittest

BUILD = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else os.environ.get("STEPSCOPE_BUILD_DIR", "build")
STEPSCOPE = os.path.join(BUILD, "bin", "stepscope")
MAKE_TRACE = os.path.join(BUILD, "tests", "make_trace")
SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(SRC, "tests", "diff", "fixtures")
SAMPLE = os.path.join(SRC, "tests", "fixtures", "sample", "sample.sqlite")
ENV = dict(os.environ, STEPSCOPE_INJECT_LIB="/nonexistent/libstepscope_inject.so", HOME="/nonexistent-home")
MISSING = "/nonexistent/input.sqlite"

# Per command: a successful invocation ({trace}, {trace2}, {json}, {config},
# {ceilings}, {stored} are files; {out} the output), where the missing input
# goes (the argument replaced by MISSING; None: the command reads no input
# file), and what -o writes: "tables" (the printed output: --format applies),
# "file" (a file of the command's own format), or "refuse" (only the refusal
# without -f can be checked here: the command runs a program under the tracer).
CASES = {
    "profile": dict(args=["-o", "{out}", "--", "true"], missing=None, output="refuse"),
    "schema": dict(args=[], missing=None, output="text"),
    "stats": dict(args=["{trace}"], missing="{trace}", output="tables"),
    "steps": dict(args=["{trace}"], missing="{trace}", output="tables"),
    "analyze": dict(args=["{trace}"], missing="{trace}", output="tables"),
    "diff": dict(args=["{trace}", "{trace2}"], missing="{trace2}", output="tables"),
    "whatif": dict(args=["{trace}"], missing="{trace}", output="tables"),
    "mfu": dict(args=["{trace}"], missing="{trace}", output="tables"),
    "import": dict(args=["{json}", "-o", "{out}"], missing="{json}", output="file", table_stdout=True),
    "memory": dict(args=["{trace}"], missing="{trace}", output="tables"),
    "plan": dict(args=["--model", "{config}", "--micro-batch", "2", "--seq-len", "128"], missing="{config}",
                 output="tables", json_document=True),  # --format json: the plan document (docs/plan.md)
    "bench": dict(args=["--show", "--ceilings", "{ceilings}"], missing="{ceilings}", output="tables"),
    "roofline": dict(args=["--from", "{stored}", "--ceilings", "{ceilings}", "--no-svg"], missing="{stored}",
                     output="tables", refuse_args=["-o", "{out}", "--", "true"]),
    "summarize": dict(args=["{trace}", "-o", "{out}"], missing="{trace}", output="file"),
    "ranks": dict(args=["{trace}"], missing="{trace}", output="tables"),
    "export": dict(args=["{trace}", "-o", "{out}"], missing="{trace}", output="file"),
    "report": dict(args=["{trace}", "-o", "{out}"], missing="{trace}", output="file"),
}


def run(args, env=None):
    return subprocess.run([STEPSCOPE] + args, env=env or ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=300)


def commands():
    out = run(["--help"]).stdout.decode()
    names, listing = [], False
    for line in out.splitlines():
        if line.startswith("commands:"):
            listing = True
        elif listing and line.startswith("  ") and line.strip():
            names.append(line.split()[0])
        elif listing and not line.strip() and names:
            break
    return names


def parse_csv(text):
    """Rows of every table; several tables come as sections headed "# name"."""
    tables = {}
    for i, block in enumerate(text.split("\n\n")):
        lines = block.strip("\n").splitlines()
        name = lines[0][2:] if lines and lines[0].startswith("# ") else f"table{i}"
        body = lines[1:] if lines and lines[0].startswith("# ") else lines
        rows = list(csv.reader(io.StringIO("\n".join(body) + "\n")))
        if rows:
            width = len(rows[0])
            for r in rows:
                if len(r) != width:
                    raise ValueError(f"{name}: a row of {len(r)} fields under a header of {width}: {r}")
        tables[name] = rows
    return tables


class ConventionTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="stepscope-convention-")
        cls.addClassCleanup(shutil.rmtree, cls.tmp, True)  # thousands were left in /tmp
        t = cls.tmp
        cls.files = {
            "trace": shutil.copy(SAMPLE, os.path.join(t, "a.sqlite")),
            "trace2": shutil.copy(SAMPLE, os.path.join(t, "b.sqlite")),
            "json": shutil.copy(os.path.join(FIXTURES, "import", "kineto_small.json"), os.path.join(t, "k.json")),
            "config": shutil.copy(os.path.join(SRC, "tests", "plan", "configs", "gpt2.json"),
                                  os.path.join(t, "config.json")),
            "ceilings": shutil.copy(os.path.join(FIXTURES, "roofline", "ceilings.json"),
                                    os.path.join(t, "ceilings.json")),
            "stored": os.path.join(t, "stored.sqlite"),
        }
        subprocess.run([MAKE_TRACE, cls.files["stored"], os.path.join(FIXTURES, "roofline", "stored.sql")],
                       check=True, stdout=subprocess.PIPE)

    def expand(self, args, out, missing=None):
        files = dict(self.files, out=out)
        res = []
        for a in args:
            res.append(MISSING if missing is not None and a == missing else a.format(**files))
        return res

    def one_line_error(self, p, what):
        err = p.stderr.decode()
        self.assertEqual(p.returncode, 2, f"{what}: exit {p.returncode}; stderr: {err}")
        self.assertEqual(len(err.strip().splitlines()), 1, f"{what}: not one line: {err}")
        self.assertIn("error:", err, what)

    def test_every_command_has_a_case(self):
        names = commands()
        self.assertGreater(len(names), 10, names)
        self.assertEqual(sorted(names), sorted(CASES), "commands and CASES differ")

    def test_help(self):
        for cmd in commands():
            with self.subTest(cmd=cmd):
                p = run([cmd, "--help"], env=dict(ENV, COLUMNS="100"))
                self.assertEqual(p.returncode, 0, cmd)
                text = p.stdout.decode()
                self.assertIn("\nExamples:\n", text, cmd)
                self.assertIn("stepscope " + cmd, text.split("\nExamples:\n", 1)[1], cmd)
                for line in text.splitlines():
                    self.assertLessEqual(len(line), 100, f"{cmd}: {line!r}")
                # One default per option: not "(default 10) (default: 10)".
                self.assertIsNone(re.search(r"\(default:? ([^)]*)\) \(default:? \1\)", text.replace("\n", " ")), cmd)
                for short in ("-q, --quiet", "-v, --verbose", "-h, --help"):
                    self.assertIn(short, text, cmd)

    def test_help_command_is_the_commands_help(self):
        # `stepscope help CMD` (nsys's and git's habit) prints CMD's help, not the list
        # of commands (issue 37); an unknown CMD is exit 2 with one line.
        for cmd in commands():
            with self.subTest(cmd=cmd):
                want = run([cmd, "--help"])
                got = run(["help", cmd])
                self.assertEqual(got.returncode, 0, got.stderr.decode())
                self.assertEqual(got.stdout.decode(), want.stdout.decode(), cmd)
                self.assertTrue(got.stdout.decode().startswith("usage: stepscope " + cmd), cmd)
        self.one_line_error(run(["help", "no-such-command"]), "help no-such-command")
        top = run(["help"])
        self.assertEqual(top.returncode, 0)
        self.assertIn("commands:", top.stdout.decode())

    def test_unknown_flag_is_exit_2(self):
        for cmd in commands():
            with self.subTest(cmd=cmd):
                self.one_line_error(run([cmd, "--no-such-flag"]), cmd)

    def test_missing_input_is_exit_2(self):
        for cmd, case in CASES.items():
            if case["missing"] is None:
                continue
            with self.subTest(cmd=cmd):
                out = os.path.join(self.tmp, f"missing_{cmd}.out")
                self.one_line_error(run([cmd] + self.expand(case["args"], out, case["missing"])), cmd)
                self.assertFalse(os.path.exists(out), cmd)

    def test_output_is_never_overwritten_without_f(self):
        for cmd, case in CASES.items():
            with self.subTest(cmd=cmd):
                # profile appends .sqlite to a name without it.
                out = os.path.join(self.tmp, f"existing_{cmd}.sqlite")
                with open(out, "w") as f:
                    f.write("keep me\n")
                args = case.get("refuse_args") or case["args"]
                if case["output"] in ("tables", "text"):
                    args = args + ["-o", out]
                p = run([cmd] + self.expand(args, out))
                self.one_line_error(p, cmd)
                self.assertIn("-f", p.stderr.decode(), cmd)
                with open(out) as f:
                    self.assertEqual(f.read(), "keep me\n", cmd)
                if case["output"] == "refuse" or "refuse_args" in case:
                    continue
                p = run([cmd, "-f"] + self.expand(args, out))
                self.assertEqual(p.returncode, 0, (cmd, p.stderr.decode()))
                with open(out, "rb") as f:
                    self.assertNotEqual(f.read(), b"keep me\n", cmd)

    def test_roofline_named_files_are_not_replaced_without_f(self):
        # --svg FILE and --results FILE are outputs too: refused before the program runs.
        for flag in ("--svg", "--results"):
            with self.subTest(flag=flag):
                out = os.path.join(self.tmp, "existing_roofline_" + flag.strip("-"))
                with open(out, "w") as f:
                    f.write("keep me\n")
                p = run(["roofline", flag, out, "-o", os.path.join(self.tmp, "never.sqlite"), "--", "true"])
                self.one_line_error(p, "roofline " + flag)
                self.assertIn(flag, p.stderr.decode())
                with open(out) as f:
                    self.assertEqual(f.read(), "keep me\n")

    def test_json_is_one_object_of_named_tables(self):
        for cmd, case in CASES.items():
            if case["output"] != "tables" and not case.get("table_stdout"):
                continue
            with self.subTest(cmd=cmd):
                out = os.path.join(self.tmp, f"json_{cmd}.out")
                p = run([cmd, "-f", "--format", "json"] + self.expand(case["args"], out))
                self.assertEqual(p.returncode, 0, (cmd, p.stderr.decode()))
                doc = json.loads(p.stdout)
                self.assertIsInstance(doc, dict, cmd)
                if case.get("json_document"):
                    continue
                self.assertTrue(doc, cmd)
                for name, rows in doc.items():
                    self.assertIsInstance(rows, list, f"{cmd}: {name}")
                    for row in rows:
                        self.assertIsInstance(row, dict, f"{cmd}: {name}")
                        for v in row.values():
                            self.assertNotIsInstance(v, (dict, list), f"{cmd}: {name}: cells are scalars")

    def test_csv_parses(self):
        for cmd, case in CASES.items():
            if (case["output"] != "tables" and not case.get("table_stdout")) or case.get("json_document"):
                continue
            with self.subTest(cmd=cmd):
                out = os.path.join(self.tmp, f"csv_{cmd}.out")
                p = run([cmd, "-f", "--format", "csv"] + self.expand(case["args"], out))
                self.assertEqual(p.returncode, 0, (cmd, p.stderr.decode()))
                tables = parse_csv(p.stdout.decode())
                self.assertTrue(any(len(rows) >= 1 for rows in tables.values()), cmd)

    def reading_cases(self):
        """(command, case) of the commands that read a trace or a foreign SQLite file (import)."""
        return [(c, k) for c, k in CASES.items() if k["missing"] in ("{trace}", "{trace2}", "{stored}", "{json}")]

    def damaged_copies(self):
        """name -> path of copies of the sample trace damaged three ways (issue 36: a
        malformed SQLite file was exit 1 with SQLite's message, naming no file)."""
        import random
        rng = random.Random(36)
        size = os.path.getsize(SAMPLE)
        with open(SAMPLE, "rb") as f:
            data = bytearray(f.read())
        page = int.from_bytes(data[16:18], "big")
        db = sqlite3.connect(SAMPLE)
        roots = [r for (r,) in db.execute(
            "SELECT rootpage FROM sqlite_master WHERE rootpage > 1 AND tbl_name NOT IN ('meta', 'strings')")]
        db.close()
        cut = bytes(data[:size * 6 // 10])
        schema = bytearray(data)
        schema[100:page] = bytes(rng.getrandbits(8) for _ in range(page - 100))
        pages = bytearray(data)
        for r in roots:
            pages[(r - 1) * page:r * page] = bytes(rng.getrandbits(8) for _ in range(page))
        out = {}
        for name, content in (("cut_short", cut), ("schema_garbage", schema), ("page_garbage", pages)):
            out[name] = os.path.join(self.tmp, name + ".sqlite")
            with open(out[name], "wb") as f:
                f.write(content)
        return out

    def test_damaged_sqlite_is_exit_2_with_one_line(self):
        for damage, path in self.damaged_copies().items():
            for cmd, case in self.reading_cases():
                with self.subTest(cmd=cmd, damage=damage):
                    out = os.path.join(self.tmp, f"damaged_{cmd}.out")
                    args = [path if a == case["missing"] else a for a in case["args"]]
                    p = run([cmd, "-f"] + self.expand(args, out))
                    self.one_line_error(p, f"{cmd} on {damage}")
                    self.assertIn(os.path.basename(path), p.stderr.decode(), (cmd, damage))
                    self.assertFalse(os.path.exists(out), (cmd, damage))

    def test_cut_off_trace_is_said_once(self):
        cut_off = shutil.copy(SAMPLE, os.path.join(self.tmp, "cut_off.sqlite"))
        db = sqlite3.connect(cut_off)
        db.execute("UPDATE meta SET value = '0' WHERE key = 'finalized'")
        db.commit()
        db.close()
        warning = "stepscope: warning: " + cut_off + " was not finalized (the run was killed?): " \
                  "the last <= 0.25 s may be missing"
        for cmd, case in self.reading_cases():
            if case["missing"] == "{json}":
                continue  # import reads no stepscope trace
            with self.subTest(cmd=cmd):
                out = os.path.join(self.tmp, f"cut_off_{cmd}.out")
                args = [cut_off if a == case["missing"] else a for a in case["args"]]
                p = run([cmd, "-f"] + self.expand(args, out))
                err = p.stderr.decode().splitlines()
                self.assertEqual([l for l in err if "finalized" in l], [warning], (cmd, err))
                # A finalized trace is not flagged, and -q silences the warning.
                p = run([cmd, "-f"] + self.expand(case["args"], out))
                self.assertNotIn("finalized", p.stderr.decode(), cmd)
                p = run([cmd, "-q", "-f"] + self.expand(args, out))
                self.assertNotIn("finalized", p.stderr.decode(), cmd)

    def test_quiet_leaves_stderr_empty(self):
        for cmd, case in CASES.items():
            if case["output"] == "refuse":
                continue
            with self.subTest(cmd=cmd):
                out = os.path.join(self.tmp, f"quiet_{cmd}.out")
                p = run([cmd, "-q", "-f"] + self.expand(case["args"], out))
                self.assertEqual(p.returncode, 0, (cmd, p.stderr.decode()))
                self.assertEqual(p.stderr.decode(), "", cmd)

    def test_verbose_says_where_the_time_went(self):
        for cmd in (["stats"], ["steps"], ["analyze"], ["whatif"], ["diff", self.files["trace2"]]):
            with self.subTest(cmd=cmd[0]):
                p = run(cmd[:1] + ["-v"] + cmd[1:] + [self.files["trace"]])
                self.assertEqual(p.returncode, 0, p.stderr.decode())
                self.assertIn("loaded in", p.stderr.decode(), cmd)

    def test_several_csv_tables_go_to_one_file_each(self):
        base = os.path.join(self.tmp, "kern")
        p = run(["stats", "-r", "cuda_gpu_kern_sum,nvtx_sum", "--format", "csv", "-o", base + ".csv",
                 self.files["trace"]])
        self.assertEqual(p.returncode, 0, p.stderr.decode())
        for name in ("cuda_gpu_kern_sum", "nvtx_sum"):
            with open(f"{base}_{name}.csv") as f:
                self.assertTrue(f.readline().startswith(("time_pct,", "rank,")), name)
        # Again without -f: refused, nothing written.
        p = run(["stats", "-r", "cuda_gpu_kern_sum,nvtx_sum", "--format", "csv", "-o", base + ".csv",
                 self.files["trace"]])
        self.one_line_error(p, "stats again")

    def test_numbers_are_lossless_and_names_whole(self):
        p = run(["steps", "--format", "json", self.files["trace"]])
        doc = json.loads(p.stdout)
        names = [r["top_kernel"] for r in doc["steps"]]
        self.assertTrue(any(len(n) > 60 for n in names), names)
        p = run(["steps", self.files["trace"]])
        self.assertTrue(all(len(line) < 400 for line in p.stdout.decode().splitlines()))
        p = run(["stats", "-r", "cuda_gpu_kern_sum", "--format", "json", self.files["trace"]])
        rows = json.loads(p.stdout)["cuda_gpu_kern_sum"]
        for r in rows:
            self.assertEqual(r["avg_ns"], r["total_ns"] / r["instances"], r["name"])

    def test_timeunit(self):
        ns = run(["steps", self.files["trace"]]).stdout.decode()
        ms = run(["steps", "--timeunit", "ms", self.files["trace"]]).stdout.decode()
        self.assertIn("Duration (ns)", ns)
        self.assertIn("Duration (ms)", ms)
        self.one_line_error(run(["steps", "--timeunit", "h", self.files["trace"]]), "--timeunit h")

    def test_old_format_spellings_still_work(self):
        out = os.path.join(self.tmp, "old.sqlite")
        p = run(["import", self.files["json"], "--format", "kineto", "-o", out])
        self.assertEqual(p.returncode, 0, p.stderr.decode())
        self.assertIn("--format kineto is deprecated; use --input-format kineto", p.stderr.decode())
        p = run(["export", "--format", "chrome", out, "-o", out + ".json"])
        self.assertEqual(p.returncode, 0, p.stderr.decode())
        self.assertIn("use --timeline-format", p.stderr.decode())
        with open(out + ".json") as f:
            self.assertIn("traceEvents", f.read(200))


if __name__ == "__main__":
    unittest.main(verbosity=1)
