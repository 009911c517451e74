#!/usr/bin/env bash
# Install the MCP Inspector CLI (a third-party MCP client) into .ci/node_modules and print the
# path of its binary. The test tests/telic/server/test_inspector.py uses it to list the tools of
# `telic serve` and call telic_list_runs.   bash .ci/inspector.sh
#
# @modelcontextprotocol/inspector-cli is the CLI; it resolves its own version from the
# @modelcontextprotocol/inspector package, so both are installed (the CLI alone cannot start).
set -euo pipefail
cd "$(dirname "$0")"
prefix="$PWD"
version="${TELIC_INSPECTOR_VERSION:-0.15.0}"
if [[ ! -x "$prefix/node_modules/.bin/mcp-inspector" ]]; then
    echo "inspector.sh: installing @modelcontextprotocol/inspector@$version" >&2
    npm install --silent --no-audit --no-fund --no-save --prefix "$prefix" \
        "@modelcontextprotocol/inspector@$version" \
        "@modelcontextprotocol/inspector-cli@$version" >&2
fi
echo "$prefix/node_modules/.bin/mcp-inspector"
