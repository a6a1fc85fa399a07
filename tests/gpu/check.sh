#!/bin/bash
# One device call of one Python check, in the frame of tests/gpu/harness.sh:
#   bash tests/gpu/check.sh NAME [ARGS...]
# runs `python3 tests/gpu/NAME.py ARGS... --out /tmp/checks/NAME` from the repository root with
# the staged install's environment (B=build-gpu/bin/stepscope and W=build-gpu/train_gpt.py are
# exported for ARGS that name them: pass them literally, e.g. --stepscope build-gpu/bin/stepscope),
# stopped at BATCH_DEADLINE_S (570 s). Under $OUT: NAME.log (the check's output, written as it
# runs) and NAME.tgz.aa, .ab, ... (its --out folder, traces left out unless TRACES=1; here:
# `cat NAME.tgz.* | tar xzf -`). Exits with the check's status.
set -u
source "$(dirname "${BASH_SOURCE[0]}")/harness.sh"
batch_init
name=${1:?usage: check.sh NAME [ARGS...]}; shift
[ -f "tests/gpu/$name.py" ] || { echo "no tests/gpu/$name.py" >&2; exit 2; }
export B W
R=/tmp/checks/$name
rm -rf "$R"; mkdir -p "$R"
set -o pipefail
timeout "$(batch_left)" python3 "tests/gpu/$name.py" "$@" --out "$R" 2>&1 | tee "$OUT/$name.log"
rc=$?
[ "${TRACES:-0}" = 1 ] || find "$R" \( -name '*.sqlite' -o -name '*.sqlite-*' \) -delete
batch_pack "$name" "$R"
batch_check_out
exit $rc
