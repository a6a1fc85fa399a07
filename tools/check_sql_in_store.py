#!/usr/bin/env python3
"""Checks that SQL lives in src/store/ only (issue 35: typed loads and writes).

The store owns the trace's schema and every statement run on it: the rest of
src/ calls typed functions of store/ (store/timeline_rows.h,
store/memory_rows.h, ...) that return plain structs, and never sees SQL text,
a Statement or sqlite3_stmt. Two checks on every source file under src/ but
src/store/, tests (*_test.cc, test_*.h) and fuzzers (*_fuzzer.cc) excepted:

  1. no string literal that holds an SQL statement (SELECT ... FROM, INSERT
     INTO, UPDATE t SET, DELETE FROM, CREATE/DROP TABLE/INDEX/VIEW, PRAGMA,
     BEGIN/COMMIT/ROLLBACK, ...), nor a clause of one (ORDER BY, GROUP BY);
     adjacent literals ("a " "b") are read as one;
  2. no call that runs SQL text: the store's Prepare() and Exec(),
     TraceReader::Query(), sqlite3_prepare*() and sqlite3_exec().

EXCEPTIONS lists the files allowed either, each with its reason. An exception
that no longer matches anything is itself reported, so the list only shrinks.

  check_sql_in_store.py SRC_DIR
"""
import os
import re
import sys

# Path under src/ -> why it may hold SQL.
EXCEPTIONS = {
    "cli/cmd_import.cc": "a usage example in --help (sqlite3 on the imported trace), never run",
    # The Nsight Systems importer reads nsys's own export, a foreign schema
    # (its tables found with PRAGMA table_info), not the store's.
    "importers/nsys_importer.cc": "reads the nsys export's own tables (foreign schema)",
    "importers/nsys_host.cc": "reads the nsys export's own tables (foreign schema)",
    "importers/nsys_um.cc": "reads the nsys export's own tables (foreign schema)",
}

SOURCE_SUFFIXES = (".h", ".cc", ".cu", ".cuh")

SQL = re.compile(
    r"\bSELECT\b[\s\S]*\bFROM\b"
    r"|^\s*SELECT\s"
    r"|\bINSERT\s+(OR\s+[A-Z]+\s+)?INTO\b"
    r"|\bUPDATE\s+\w+\s+SET\b|^\s*UPDATE\s"
    r"|\bDELETE\s+FROM\b"
    r"|\b(CREATE|DROP)\s+(TEMP\s+|TEMPORARY\s+|UNIQUE\s+)?(TABLE|INDEX|VIEW|TRIGGER)\b"
    r"|\bALTER\s+TABLE\b|\bATTACH\s+DATABASE\b"
    r"|\bPRAGMA\s+\w"
    r"|^\s*(BEGIN|COMMIT|ROLLBACK|VACUUM)\b"
    r"|\b(ORDER|GROUP)\s+BY\b"  # a clause handed to a store loader
)
# Prepare( and Exec( unqualified (TracedRun::Prepare is another thing).
RUNS_SQL = re.compile(
    r"(?<![\w:.>])(Prepare|Exec)\s*\(|\bsqlite3_(prepare\w*|exec)\s*\(|(\.|->)Query\s*\(")


# What precedes a call (not a declaration) of Prepare( or Exec(.
CALL_CONTEXT = tuple("(,=!{};:?&|")


def exempt_file(rel):
    name = os.path.basename(rel)
    return (rel.startswith("store/") or name.endswith("_test.cc") or name.endswith("_fuzzer.cc")
            or name.startswith("test_"))


def literals_and_code(src):
    """(code with comments and literals blanked, [(line, text)] of literal runs).

    A run is a string literal and the literals that follow it with only
    whitespace or comments between ("SELECT a " "FROM t" is one run).
    """
    code = []
    runs = []
    i, n, line = 0, len(src), 1
    current = None  # [line, text] of the run being read
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            code.append(" " * (j - i))
            i = j
            continue
        if src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            text = src[i:j]
            code.append(re.sub(r"[^\n]", " ", text))
            line += text.count("\n")
            i = j
            continue
        raw = re.match(r'(?:u8|u|U|L)?R"([^(\s]*)\(', src[i:i + 24])
        if raw or c == '"':
            if raw:
                end = ")" + raw.group(1) + '"'
                j = src.find(end, i + raw.end())
                j = n if j < 0 else j + len(end)
                text = src[i + raw.end():j - len(end)]
            else:
                j = i + 1
                while j < n and src[j] != '"' and src[j] != "\n":
                    j += 2 if src[j] == "\\" else 1
                j = min(j + 1, n)
                text = src[i + 1:j - 1]
            if current is None:
                current = [line, ""]
                runs.append(current)
            current[1] += text
            whole = src[i:j]
            code.append(re.sub(r"[^\n]", " ", whole))
            line += whole.count("\n")
            i = j
            continue
        if c == "'":
            j = i + 1
            while j < n and src[j] != "'" and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            code.append(" " * (j + 1 - i))
            i = j + 1
            continue
        if not c.isspace():
            current = None
        if c == "\n":
            line += 1
        code.append(c)
        i += 1
    return "".join(code), runs


def check_file(path, rel):
    with open(path, errors="replace") as f:
        src = f.read()
    code, runs = literals_and_code(src)
    found = []
    for line, text in runs:
        if SQL.search(text):
            found.append(f"{rel}:{line}: SQL text outside src/store/: \"{text[:60]}\"")
    for m in RUNS_SQL.finditer(code):
        before = code[max(0, m.start() - 200):m.start()].rstrip()
        if m.group(1) and not (before.endswith(CALL_CONTEXT) or before.endswith("return")):
            continue  # a declaration of another Prepare or Exec ("Type Prepare(...)")
        line = code.count("\n", 0, m.start()) + 1
        found.append(f"{rel}:{line}: runs SQL outside src/store/: {m.group(0).strip()}")
    return found


def main():
    root = sys.argv[1]
    bad = []
    matched = set()
    for dirpath, dirs, files in os.walk(root):
        dirs.sort()
        for fn in sorted(files):
            if not fn.endswith(SOURCE_SUFFIXES):
                continue
            path = os.path.join(dirpath, fn)
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            if exempt_file(rel):
                continue
            found = check_file(path, rel)
            if found and rel in EXCEPTIONS:
                matched.add(rel)
                continue
            bad += found
    for rel in sorted(set(EXCEPTIONS) - matched):
        bad.append(f"tools/check_sql_in_store.py: {rel}: listed as an exception but holds no SQL "
                   "(remove it from EXCEPTIONS)")
    for b in bad:
        print(b)
    print(f"sql in store: {len(bad)} violation(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
