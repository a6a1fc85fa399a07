#!/usr/bin/env python3
"""Lists the files under bench/results that no document cites; exits 1 if there are any.

bench/results holds raw outputs of the GPU scripts as they came back from the lent machines.
A file stays only while a document points at it, so the folder is what the docs quote and no
more. A file is cited when one of the documents below names it:

  * by path: `bench/results/DATE/name.json`, a glob (`.../overhead_phases_*`) or braces
    (`.../h{100,200}_peer_*`);
  * by folder: `bench/results/DATE/` or `bench/results/DATE/sub/` cites everything under it;
  * by a name in backticks relative to a folder cited earlier in the same markdown section:
    after `bench/results/2026-11-24d/overhead_*`, a later `pairs_small_pinned_h200.*` or
    `2026-11-24i/` in that section is looked up under bench/results/2026-11-24d/ and under
    bench/results/.

A folder's README.md (it names the command of each file) is kept while any other file of that
folder is. Folders in KEEP are kept whole (results being written up now).

The documents: README.md, docs/**/*.md, bench/README.md, tests/**/README.md, and comments in
src/ and tests/ (a test's or rule's comment may cite the run it was fitted on).

usage: tools/check_bench_results.py [ROOT] [--list-cited] [--folder-only] [--delete]
  --list-cited  print the cited files instead of the uncited ones
  --folder-only print the files cited only by a whole dated folder (`bench/results/DATE/`):
                what narrowing those citations to the files quoted would let go
  --delete      `git rm -q` the uncited files (run from a clean checkout; review the diff)
"""
import fnmatch
import glob
import os
import re
import subprocess
import sys

KEEP = ["2026-11-27"]  # results cited by notes still being written

MENTION = re.compile(r"bench/results/(?:[^\s`'\"()\[\],;{]|\{[^{}\s]*\})*")
TICKED = re.compile(r"`([^`\s]+)`")
SOURCE_EXT = (".md", ".cc", ".h", ".cpp", ".py", ".txt", ".cmake", ".sh")


def expand_braces(s):
    """`a{b,c}d` -> [abd, acd]; nested and repeated braces too."""
    m = re.search(r"\{([^{}]*)\}", s)
    if not m:
        return [s]
    out = []
    for alt in m.group(1).split(","):
        out.extend(expand_braces(s[:m.start()] + alt + s[m.end():]))
    return out


def documents(root):
    docs = [os.path.join(root, "README.md"), os.path.join(root, "bench", "README.md")]
    docs += glob.glob(os.path.join(root, "docs", "**", "*.md"), recursive=True)
    docs += glob.glob(os.path.join(root, "tests", "**", "README.md"), recursive=True)
    for top in ("src", "tests"):
        for d, _, files in os.walk(os.path.join(root, top)):
            docs += [os.path.join(d, f) for f in files if f.endswith(SOURCE_EXT) and f != "README.md"]
    return sorted(set(p for p in docs if os.path.isfile(p)))


def sections(text):
    """Markdown sections (a heading starts one); a whole file when it has no headings."""
    return re.split(r"\n(?=#+ )", text)


def patterns_of(text):
    """Yields path patterns relative to the repository root, each a glob or a folder ending in /."""
    for para in sections(text):
        folders = []
        for m in MENTION.finditer(para):
            token = m.group(0).rstrip(".:")
            for p in expand_braces(token):
                yield p
                folders.append(p if p.endswith("/") else os.path.dirname(p) + "/")
        if not folders:
            continue
        base = folders[-1]
        for t in TICKED.findall(para):
            if t.startswith(("bench/", "-", "/", "$")) or not re.search(r"[.*/{]", t):
                continue
            for p in expand_braces(t.rstrip(".:")):
                for f in dict.fromkeys(folders + [base, "bench/results/"]):
                    yield f + p


def matches(path, pattern):
    if pattern.endswith("/"):
        return path.startswith(pattern)
    return fnmatch.fnmatchcase(path, pattern) or path.startswith(pattern + "/") or \
        any(fnmatch.fnmatchcase(path[:i], pattern) for i in range(len(path)) if path[i] == "/")


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    root = os.path.abspath(args[0] if args else os.path.join(os.path.dirname(__file__), ".."))
    results = os.path.join(root, "bench", "results")
    files = sorted(os.path.relpath(os.path.join(d, f), root).replace(os.sep, "/")
                   for d, _, fs in os.walk(results) for f in fs)
    pats = set()
    for doc in documents(root):
        with open(doc, encoding="utf-8", errors="replace") as fh:
            pats.update(patterns_of(fh.read()))
    pats.update(f"bench/results/{k}/" for k in KEEP)
    cited = {f for f in files if any(matches(f, p) for p in pats)}
    # a folder's README stays with the files it describes
    for f in files:
        if os.path.basename(f) == "README.md" and any(
                c != f and c.startswith(os.path.dirname(f) + "/") for c in cited):
            cited.add(f)
    uncited = [f for f in files if f not in cited]
    if "--folder-only" in sys.argv:
        whole = re.compile(r"bench/results/[^/]+/$")
        narrow = [p for p in pats if not whole.match(p)]
        for f in sorted(cited):
            if os.path.basename(f) != "README.md" and not any(matches(f, p) for p in narrow):
                print(f"folder-only: {f}")
        return 0
    if "--list-cited" in sys.argv:
        print("\n".join(sorted(cited)))
        return 0
    for f in uncited:
        print(f"uncited: {f}")
    print(f"check_bench_results: {len(files)} files under bench/results, {len(cited)} cited, "
          f"{len(uncited)} cited by no document", file=sys.stderr)
    if "--delete" in sys.argv and uncited:
        subprocess.run(["git", "-C", root, "rm", "-q", "--"] + uncited, check=True)
        return 0
    return 1 if uncited else 0


if __name__ == "__main__":
    sys.exit(main())
