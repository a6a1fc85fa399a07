#!/usr/bin/env bash
# Installs every build and test dependency of stepscope, idempotently.
# Debian packages via apt-get; front-end packages (charting library, Playwright)
# via npm from package-lock.json. CUDA 13 (headers, CUPTI) is expected at
# /usr/local/cuda, as on the project's machines. See docs/DEPENDENCIES.md.
set -euo pipefail
cd "$(dirname "$0")/.."

DEBS=(cmake ninja-build g++ clang clang-format libclang-rt-14-dev libsqlite3-dev sqlite3 zlib1g-dev
      libgtest-dev libgmock-dev libunwind-dev liblzma-dev python3 python3-pandas python3-venv chromium libprotobuf-dev protobuf-compiler)
# Node.js and npm: the machines ship them (with npm 11); Debian's npm package
# conflicts with that install, so only ask apt when there is no npm at all.
if ! command -v npm >/dev/null 2>&1; then
  DEBS+=(nodejs npm)
fi

missing=()
for p in "${DEBS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "bootstrap: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if [ -f package.json ]; then
  if [ ! -d node_modules ] || [ package-lock.json -nt node_modules ]; then
    echo "bootstrap: npm ci"
    npm ci --no-audit --no-fund --loglevel=error
    touch node_modules
  fi
fi

if [ ! -e /usr/local/cuda/include/cupti.h ] && [ ! -e /usr/local/cuda/extras/CUPTI/include/cupti.h ]; then
  echo "bootstrap: note: CUDA/CUPTI not found at /usr/local/cuda; the injected tracer will not be built" >&2
fi
echo "bootstrap: ok"
