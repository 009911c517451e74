#!/usr/bin/env bash
# Install the command-line tools the tests need beyond Python and git: ripgrep, for the
# grounding inventory's ripgrep fallback (tests/telic/grounding must run it when CI=true).
# Installs from the Debian packages when missing; running it again changes nothing.
set -euo pipefail

say() { echo "tools.sh: $*" >&2; }

if command -v rg >/dev/null 2>&1; then
    say "ripgrep present: $(rg --version | head -n 1)"
    exit 0
fi

say "installing ripgrep from the Debian packages"
sudo_cmd=()
if [[ "$(id -u)" != 0 ]]; then sudo_cmd=(sudo); fi
"${sudo_cmd[@]}" apt-get update -qq >&2
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq ripgrep >&2
command -v rg >/dev/null 2>&1 || { say "ripgrep installed but rg is not on PATH"; exit 1; }
say "ripgrep ready: $(rg --version | head -n 1)"
