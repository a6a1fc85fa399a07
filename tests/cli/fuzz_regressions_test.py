#!/usr/bin/env python3
"""Defects the fuzz campaign found (scripts/fuzz_campaign.py, issue 36), each rebuilt from a
bundled fixture with the SQL that reproduces it: every one must end with exit 2 and one line.

usage: fuzz_regressions_test.py BUILD_DIR
"""
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import unittest

BUILD = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else os.environ.get("STEPSCOPE_BUILD_DIR", "build")
STEPSCOPE = os.path.join(BUILD, "bin", "stepscope")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE = os.path.join(ROOT, "tests", "fixtures", "sample", "sample.sqlite")
NSYS = os.path.join(ROOT, "tests", "fixtures", "public", "nsys", "fuser_h100_report1.sqlite")


class FuzzRegressionsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="stepscope-fuzzreg-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def mutant(self, src, sql, name):
        path = os.path.join(self.tmp, name)
        shutil.copyfile(src, path)
        db = sqlite3.connect(path)
        db.executescript(sql)
        db.commit()
        db.close()
        return path

    def one_line_exit_2(self, args):
        p = subprocess.run([STEPSCOPE] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        err = [l for l in p.stderr.decode("utf-8", "replace").splitlines() if l.strip()]
        errors = [l for l in err if "error:" in l]
        self.assertEqual(p.returncode, 2, err)
        self.assertEqual(len(errors), 1, err)
        self.assertTrue(all(l.startswith("stepscope") for l in err), err)

    def test_whatif_on_kernels_with_text_times_is_exit_2(self):
        # Was exit 1 ("internal"): the replay's graph has a cycle when start_ns is text.
        t = self.mutant(SAMPLE, "UPDATE kernels SET start_ns = '';", "text_times.sqlite")
        self.one_line_exit_2(["whatif", "--remove-sync", "all", "--prefetch", "--pin", t])

    def test_import_of_an_nsys_export_missing_a_column_is_exit_2(self):
        # Was exit 1 ("sqlite prepare failed: no such column: id").
        n = self.mutant(NSYS, "ALTER TABLE StringIds RENAME COLUMN id TO id_gone;", "no_id.sqlite")
        self.one_line_exit_2(["import", n, "-o", os.path.join(self.tmp, "out.sqlite")])

    def test_a_trace_with_an_unknown_schema_format_byte_is_exit_2(self):
        # Byte 47 (the schema format number) flipped to 9: "sqlite prepare failed:
        # unsupported file format", exit 1, from stats, analyze, whatif, steps.
        t = os.path.join(self.tmp, "format9.sqlite")
        shutil.copyfile(SAMPLE, t)
        with open(t, "r+b") as f:
            f.seek(47)
            f.write(b"\x09")
        for cmd in ("stats", "analyze", "whatif", "steps", "memory", "summarize"):
            with self.subTest(cmd=cmd):
                self.one_line_exit_2([cmd, t] + (["-o", "-"] if cmd == "summarize" else []))

    def test_a_damaged_schema_statement_is_said_on_one_line(self):
        # SQLite's "malformed database schema (T) - unrecognized token: ..." quotes the CREATE
        # statement, newlines and all: import printed three lines.
        n = self.mutant(NSYS, "PRAGMA writable_schema=ON; UPDATE sqlite_master SET sql = "
                              "'CREATE TABLE ENUM_PMU_UNIT_TYPE(' || char(10) || '  `name TEXT,' || "
                              "char(10) || '  id INTEGER)' WHERE name = 'ENUM_PMU_UNIT_TYPE';",
                        "schema.sqlite")
        self.one_line_exit_2(["import", n, "-o", os.path.join(self.tmp, "out.sqlite")])

    def test_chrome_export_of_long_names_is_bounded(self):
        # Chrome JSON repeats each name per event: 200 kB names on every slice made a 25 MB
        # trace a 2.6 GB file in 13 s. Names over 16 KiB are cut there, and said.
        t = self.mutant(SAMPLE, "UPDATE strings SET value = printf('%.*c', 1000000, 'x') WHERE id = "
                                "(SELECT name_id FROM kernels GROUP BY name_id ORDER BY COUNT(*) DESC "
                                "LIMIT 1);", "long_name.sqlite")
        out = os.path.join(self.tmp, "t.json")
        p = subprocess.run([STEPSCOPE, "export", "--timeline-format", "chrome", t, "-o", out],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertLess(os.path.getsize(out), 100 << 20)
        self.assertIn(b"1,176 names longer than 16 KiB were cut", p.stderr)


if __name__ == "__main__":
    unittest.main()
