#!/usr/bin/env python3
"""Lists functions under src/ longer than a limit (default 150 lines).

  check_function_length.py SRC_DIR [--max N] [--report M]

A function's length is counted from the first line of its signature to its
closing brace, comments and blank lines included. The scan matches braces in
the source with comments, string and character literals blanked out: a
function is a `{` at namespace or class scope that follows `)` (optionally
const/noexcept/override/final, a trailing return type, or a constructor's
initializer list). Lambdas and blocks inside a function count as part of it.
A function longer than --max is a violation (exit 1); --report M lists every
function over M lines without failing, longest first.

Long functions are split the way earlier commits did (pure extraction into
named steps, the same work in the same order; outputs unchanged).
"""
import argparse
import os
import re
import sys

SUFFIXES = (".h", ".cc", ".cu", ".cuh")
CONTROL = re.compile(r"\b(if|for|while|switch|catch|else|do|namespace|struct|class|enum|union|extern)\b[^;{}]*$")
AFTER_PARAMS = re.compile(r"\)\s*((const|noexcept|override|final|mutable)\s*|->\s*[\w:<>,*&\s]+)*$")
CTOR_INIT = re.compile(r"\)\s*:(?!:)")
NAME = re.compile(r"([~\w:]+(?:<[^()]*>)?)\s*\(")


def blank(src):
    """The source with comments, string and character literals replaced by spaces (newlines kept)."""
    out = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif src.startswith('R"', i) and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_")):
            m = re.match(r'R"([^(\s]*)\(', src[i:])
            delim = m.group(1) if m else ""
            j = src.find(")" + delim + '"', i)
            j = n if j < 0 else j + len(delim) + 2
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif c == '"' or (c == "'" and not (i > 0 and src[i - 1].isalnum())):  # 1'000 is a digit separator
            j = i + 1
            while j < n and src[j] != c and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            out.append(c + re.sub(r"[^\n]", " ", src[i + 1 : j]) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    text = "".join(out)
    return re.sub(r"^[ \t]*#.*$", lambda m: " " * len(m.group(0)), text, flags=re.M)  # preprocessor lines


def functions(text):
    """(first line, last line, name) of each function body in blanked source."""
    stack = []  # ("fn", first line, name) | ("init", 0, "") | ("block", 0, "")
    header_start = 0  # where the text before the next brace starts
    for i, c in enumerate(text):
        if c == "{":
            header = text[header_start:i]
            h = header.strip()
            in_fn = any(kind == "fn" for kind, _, _ in stack)
            if in_fn:
                stack.append(("block", 0, ""))
            elif CTOR_INIT.search(h) and not CONTROL.search(h) and (h.endswith(("(", ",")) or re.search(r"[\w>]$", h)):
                stack.append(("init", 0, ""))  # a member's brace initializer: the header goes on
                continue
            elif "(" in h and (AFTER_PARAMS.search(h) or (CTOR_INIT.search(h) and h.endswith(("}", ")")))) \
                    and not CONTROL.search(h) and not re.search(r"=\s*\[", h):
                names = NAME.findall(h)
                lead = len(header) - len(header.lstrip())
                first = text.count("\n", 0, header_start + lead) + 1
                stack.append(("fn", first, names[0] if names else "?"))
            else:
                stack.append(("block", 0, ""))
            header_start = i + 1
        elif c == "}":
            kind, first, name = stack.pop() if stack else ("block", 0, "")
            if kind == "init":
                continue
            if kind == "fn":
                yield first, text.count("\n", 0, i) + 1, name
            header_start = i + 1
        elif c == ";":
            header_start = i + 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src")
    ap.add_argument("--max", type=int, default=150)
    ap.add_argument("--report", type=int)
    args = ap.parse_args()
    found = []
    for dirpath, dirs, files in os.walk(args.src):
        dirs.sort()
        for fn in sorted(files):
            if not fn.endswith(SUFFIXES):
                continue
            path = os.path.join(dirpath, fn)
            with open(path, errors="replace") as f:
                text = blank(f.read())
            for first, last, name in functions(text):
                found.append((last - first + 1, os.path.relpath(path, args.src), first, name))
    found.sort(key=lambda r: (-r[0], r[1], r[2]))
    if args.report is not None:
        for n, rel, line, name in found:
            if n > args.report:
                print(f"{rel}:{line}: {name}: {n} lines")
        return 0
    bad = [r for r in found if r[0] > args.max]
    for n, rel, line, name in bad:
        print(f"{rel}:{line}: {name}: {n} lines (over {args.max}: split it into named steps)")
    print(f"function length: {len(bad)} function(s) over {args.max} lines ({len(found)} scanned)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
