#!/usr/bin/env bash
# `cmake --install` of a build tree works, and the installed stepscope runs from
# its new place: it needs no file of the source or build tree (the report's
# charting library is compiled in).
#   tests/install_smoke.sh BUILD_DIR SOURCE_DIR [MAKE_TRACE] [CMAKE]
set -euo pipefail
BUILD=$1
SRC=$2
MAKE_TRACE=${3:-$BUILD/tests/make_trace}
CMAKE=${4:-cmake}
PREFIX=$BUILD/install-test
rm -rf "$PREFIX"
"$CMAKE" --install "$BUILD" --prefix "$PREFIX" >/dev/null
fail() { echo "install_smoke: $*" >&2; exit 1; }
[ -x "$PREFIX/bin/stepscope" ] || fail "bin/stepscope not installed"
"$PREFIX/bin/stepscope" --help >/dev/null || fail "installed stepscope --help failed"
[ -f "$PREFIX/lib/python/stepscope/__init__.py" ] || fail "python/stepscope not installed"
[ -f "$PREFIX/lib/python/stepscope_hook/sitecustomize.py" ] || fail "python/stepscope_hook not installed"
if find "$PREFIX/lib/python" -name '*_test.py' -o -name '__pycache__' | grep -q .; then
  fail "tests or caches installed under lib/python"
fi
if [ -f "$BUILD/lib/libstepscope_inject.so" ]; then
  [ -f "$PREFIX/lib/libstepscope_inject.so" ] || fail "lib/libstepscope_inject.so not installed"
fi
# The installed binary writes a report from a trace, away from both trees.
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
"$MAKE_TRACE" "$WORK/t.sqlite" "$SRC/tests/diff/fixtures/report/training_steps.sql" >/dev/null
(cd "$WORK" && "$PREFIX/bin/stepscope" report -q t.sqlite -o r.html) || fail "installed stepscope report failed"
[ -s "$WORK/r.html" ] || fail "installed stepscope wrote no report"
echo "install_smoke: ok ($PREFIX)"
