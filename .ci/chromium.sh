#!/usr/bin/env bash
# Make Debian's chromium available for the headless report test (tests/telic/reports/test_browser.py).
# Prints nothing but errors. Called from .ci/run; safe to run again.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
    exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends chromium; } >"$log" 2>&1; then
    cat "$log" >&2
    echo "chromium.sh: could not install Debian's chromium" >&2
    exit 1
fi
command -v chromium >/dev/null 2>&1 || { echo "chromium.sh: chromium is still missing" >&2; exit 1; }
