#!/usr/bin/env bash
# Install `telic` the way people install Python tools, each in a fresh environment, and check
# that it lands on the PATH and runs: `uv tool install .`, `pipx install .` (pipx's default uv
# backend) and `pipx install --backend pip` with the two sibling distributions preinstalled.
# pipx and uv come from PyPI into a throwaway virtual environment; nothing outside a temporary
# folder is touched, and the folder is removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
checkout="$PWD"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

say() { echo "tool-install.sh: $*" >&2; }

python3 -m venv "$scratch/tools"
"$scratch/tools/bin/python" -m pip install --quiet pipx uv >&2
mkdir -p "$scratch/home" "$scratch/repo"
git -C "$scratch/repo" init -q

# Run `telic` exactly as a person would after the install: by name, from the tool's bin folder
# on an otherwise minimal PATH, in a fresh home, on a fresh repository.
check() {
    local how="$1" bin="$2"
    local found
    found="$(env -i HOME="$scratch/home" PATH="$bin:/usr/bin:/bin" sh -c 'command -v telic')"
    [[ "$found" == "$bin/telic" ]] || { say "$how: telic is not on the PATH ($found)"; exit 1; }
    env -i HOME="$scratch/home" PATH="$bin:/usr/bin:/bin" XDG_STATE_HOME="$scratch/state" \
        telic --version >&2
    local runs
    runs="$(env -i HOME="$scratch/home" PATH="$bin:/usr/bin:/bin" \
        XDG_STATE_HOME="$scratch/state" telic --repository-root "$scratch/repo" runs)"
    [[ "$runs" == "No runs yet for $scratch/repo"* ]] || { say "$how: telic runs: $runs"; exit 1; }
    [[ ! -e "$scratch/state" ]] || { say "$how: a read-only command created state"; exit 1; }
    say "$how: telic on the PATH at $found"
}

tools="$scratch/tools/bin"
export UV_CACHE_DIR="$scratch/uv-cache" PIP_DISABLE_PIP_VERSION_CHECK=1

UV_TOOL_DIR="$scratch/uv-tools" UV_TOOL_BIN_DIR="$scratch/uv-bin" \
    "$tools/uv" tool install "$checkout" >&2
check "uv tool install ." "$scratch/uv-bin"

PATH="$tools:$PATH" PIPX_HOME="$scratch/pipx" PIPX_BIN_DIR="$scratch/pipx-bin" \
    "$tools/pipx" install "$checkout" >&2
check "pipx install ." "$scratch/pipx-bin"

PIPX_HOME="$scratch/pipx-pip" PIPX_BIN_DIR="$scratch/pipx-pip-bin" \
    "$tools/pipx" install --backend pip "$checkout" \
    --preinstall "$checkout/packets" --preinstall "$checkout/actors" >&2
check "pipx install --backend pip" "$scratch/pipx-pip-bin"
