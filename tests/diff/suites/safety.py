# Hostile and misused inputs: every command answers a damaged trace or an
# output that would replace its input with one line and exit code 2, leaves no
# temporary file behind (the `ls` after each), and never prints a control
# character or invalid UTF-8 that a trace carried in its names.
LS = ["ls", "{tmp}"]
CHECK_FILES = ["python3", "-c", """
import json, os, re
for f in sorted(os.listdir("o")):
    text = open(os.path.join("o", f), "rb").read().decode("utf-8")  # strict
    if f.endswith(".json"):
        json.loads(text)
    bad = re.findall("[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f]", text)
    names = sorted(set(re.findall("kern[^,\\"\\n]*", text)))
    print(f, "ok" if not bad else "CONTROL CHARACTERS", names)
"""]


def refused(name, cmd, fixture, out=None, **kw):
    return DiffTest(name=name, cmd=cmd, trace=fixture if isinstance(fixture, list) or "/" in fixture else "safety/" + fixture,
                    out="safety/" + (out or name) + ".err", rc=2, stderr=True, post=LS, **kw)


TESTS = [
    # A strings id of 2^30 (was: a 32 GiB allocation, abort).
    refused("huge_string_id_stats", ["stats", "{trace}"], "huge_string_id.sql"),
    refused("huge_string_id_export", ["export", "{trace}", "-o", "{tmp}/out.pftrace"], "huge_string_id.sql"),
    refused("huge_string_id_summarize", ["summarize", "{trace}", "-o", "{tmp}/out.json"], "huge_string_id.sql"),
    # INT64_MIN timestamps (was: std::length_error in export, abort, temp file left).
    refused("int64_min_time_export", ["export", "{trace}", "-o", "{tmp}/out.pftrace"], "int64_min_time.sql"),
    refused("int64_min_time_export_chrome",
            ["export", "--timeline-format", "chrome", "{trace}", "-o", "{tmp}/out.json"], "int64_min_time.sql"),
    # The commands that do not need the span read the times clamped to
    # [0, 2^62] ns (no signed overflow: the ASan+UBSan suite aborts on one).
    DiffTest(name="int64_min_time_summarize", cmd=["summarize", "{trace}", "-o", "-"],
             trace="safety/int64_min_time.sql", out="safety/int64_min_time_summarize.json"),
    DiffTest(name="int64_min_time_steps", cmd=["steps", "{trace}"],
             trace="safety/int64_min_time.sql", out="safety/int64_min_time_steps.txt"),
    DiffTest(name="int64_min_time_memory", cmd=["memory", "{trace}"],
             trace="safety/int64_min_time.sql", out="safety/int64_min_time_memory.txt"),
    DiffTest(name="int64_min_time_stats", cmd=["stats", "-r", "cuda_gpu_kern_sum", "{trace}"],
             trace="safety/int64_min_time.sql", out="safety/int64_min_time_stats.txt"),
    # Rank 2^31-1 (was: a list of two billion missing ranks, abort).
    refused("rank_max_ranks", ["ranks", "{traces}"], ["safety/rank_max.sql", "safety/base.sql"]),
    # An output that is the input (was: the input silently replaced).
    refused("output_is_input_export", ["export", "{trace}", "-o", "{trace}"], "base.sql"),
    refused("output_is_input_report", ["report", "{trace}", "-o", "{trace}"], "base.sql"),
    refused("output_is_input_summarize", ["summarize", "{trace}", "-o", "{trace}"], "base.sql"),
    refused("output_is_input_memory", ["memory", "{trace}", "-o", "{trace}"], "base.sql"),
    refused("output_is_input_stats", ["stats", "{trace}", "--output", "{trace}"], "base.sql"),
    refused("output_is_input_import_dot_slash", ["import", "{trace}", "-o", "./kineto_small.json"],
            "import/kineto_small.json"),
    # Names with escape sequences and invalid UTF-8: shown with U+FFFD.
    DiffTest(name="hostile_names_stats_text",
             cmd=["stats", "-r", "cuda_gpu_kern_sum", "-r", "nvtx_sum", "{trace}"],
             trace="safety/hostile_names.sql", out="safety/hostile_names_stats.txt"),
    # Bidirectional controls (U+202E, U+2066, U+2069, U+200F) escaped as <U+202E>, in text and JSON.
    DiffTest(name="bidi_names_stats_text",
             cmd=["stats", "-r", "cuda_gpu_kern_sum", "-r", "nvtx_sum", "{trace}"],
             trace="safety/bidi_names.sql", out="safety/bidi_names_stats.txt"),
    DiffTest(name="bidi_names_steps_json", cmd=["steps", "--format", "json", "{trace}"],
             trace="safety/bidi_names.sql", out="safety/bidi_names_steps.json"),
    # Every file strictly UTF-8, JSON parses, CSV has no control character.
    DiffTest(name="hostile_names_stats_json", cmd=["stats", "--format", "json", "--output", "{tmp}/o/", "{trace}"],
             trace="safety/hostile_names.sql", out="safety/hostile_names_stats_json.txt", post=CHECK_FILES),
    DiffTest(name="hostile_names_stats_csv", cmd=["stats", "--format", "csv", "--output", "{tmp}/o/", "{trace}"],
             trace="safety/hostile_names.sql", out="safety/hostile_names_stats_csv.txt", post=CHECK_FILES),
]
# Impossible durations (an end before the start, 2^50 ns): the export draws them clamped as the
# other readers do and says how many in one line (it used to say nothing).
TESTS.append(DiffTest(name="bad_durations_export_counted",
                      cmd=["export", "--timeline-format", "chrome", "{trace}", "-o", "{tmp}/out.json"],
                      trace="safety/base.sql+safety/bad_durations.sql", out="safety/bad_durations_export.err",
                      stderr=True, post=LS))
