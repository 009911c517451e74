#!/usr/bin/env bash
# Install the real Claude Code and Codex CLIs (npm, pinned) into .ci/hosts, and print two lines:
# the path of the `claude` binary and the path of the `codex` binary. The tests under
# tests/telic/hosts/realhost/ drive both through the kit `telic init` writes, with a loopback
# stand-in for each one's model API (no network beyond this install, no key).   bash .ci/hosts.sh
#
# Both packages ship a native binary in a per-platform optional dependency; the tests run the
# native binaries directly, so no Node is needed at test time. Idempotent: a second run with the
# same versions installs nothing.
set -euo pipefail
cd "$(dirname "$0")"
prefix="$PWD/hosts"
claude_version="${TELIC_CLAUDE_CODE_VERSION:-2.1.197}"
codex_version="${TELIC_CODEX_VERSION:-0.171.0}"
claude="$prefix/node_modules/@anthropic-ai/claude-code/bin/claude.exe"
codex="$(ls "$prefix"/node_modules/@openai/codex-linux-*/vendor/*/bin/codex 2>/dev/null | head -n 1 || true)"
installed="$(cat "$prefix/.installed" 2>/dev/null || true)"
if [[ ! -x "$claude" || ! -x "$codex" || "$installed" != "claude-code$claude_version codex$codex_version" ]]; then
    echo "hosts.sh: installing @anthropic-ai/claude-code@$claude_version, @openai/codex@$codex_version" >&2
    mkdir -p "$prefix"
    npm install --silent --no-audit --no-fund --no-save --prefix "$prefix" \
        "@anthropic-ai/claude-code@$claude_version" "@openai/codex@$codex_version" >&2
    codex="$(ls "$prefix"/node_modules/@openai/codex-linux-*/vendor/*/bin/codex | head -n 1)"
    echo "claude-code$claude_version codex$codex_version" > "$prefix/.installed"
fi
echo "$claude"
echo "$codex"
