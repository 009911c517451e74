"""The tool fuzz target at full size: at least 100,000 examples, with its result and duration.

``tests/telic/server/test_fuzz.py`` throws hostile and valid-looking arguments at every MCP tool
in process, on asyncio (as ``telic serve`` runs), and checks that every call returns a
well-formed envelope and that every refusal leaves the ledger as it was. The test suite runs it
at 1,100 examples; this script runs it in chunks of ``--chunk`` examples, each chunk with its own
Hypothesis seed (``--seed``, ``--seed + 1``, …), until ``--examples`` examples ran, and stops at
the first failing chunk. The figure (examples, failures, wall time, examples per second) is
appended to ``benchmarks/README.md`` only when the whole run ended, passed or failed; a failing
chunk's seed reproduces it::

    TELIC_FUZZ_EXAMPLES=<chunk> pytest tests/telic/server/test_fuzz.py --hypothesis-seed=<seed>

Run it with ``make fuzz-bench`` (or ``python benchmarks/fuzz.py --examples 100000``). It is not
part of CI: CI runs the suite's 1,100 examples.
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import time

from _common import ROOT, append_rows, commit, machine, today

BACKENDS = 1
"""The fuzz test runs every example on asyncio only (the tools' answers do not depend on it)."""

COLUMNS = (
    "date",
    "commit",
    "machine",
    "examples",
    "chunks (per backend each)",
    "result",
    "wall time",
    "examples / s",
)


def run_chunk(examples_per_backend: int, seed: int) -> tuple[bool, float, str]:
    """Run one chunk; return whether it passed, its wall time and pytest's last lines."""
    started = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "tests/telic/server/test_fuzz.py",
            "-q",
            "-p",
            "no:randomly",
            "-p",
            "no:cacheprovider",
            f"--hypothesis-seed={seed}",
        ],
        cwd=ROOT,
        env={**os.environ, "TELIC_FUZZ_EXAMPLES": str(examples_per_backend)},
        capture_output=True,
        text=True,
    )
    tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
    return done.returncode == 0, time.perf_counter() - started, tail


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=100_000, help="both backends together")
    parser.add_argument("--chunk", type=int, default=5_000, help="examples per backend per chunk")
    parser.add_argument("--seed", type=int, default=18, help="the first chunk's Hypothesis seed")
    parser.add_argument("--no-record", action="store_true", help="do not append to the README")
    args = parser.parse_args()
    chunks = math.ceil(args.examples / (BACKENDS * args.chunk))
    ran, wall, failed = 0, 0.0, None
    for index in range(chunks):
        seed = args.seed + index
        passed, seconds, tail = run_chunk(args.chunk, seed)
        wall += seconds
        if not passed:
            failed = seed
            print(f"chunk {index + 1}/{chunks} (seed {seed}) FAILED:\n{tail}", file=sys.stderr)
            break
        ran += BACKENDS * args.chunk
        rate = ran / wall
        print(
            f"chunk {index + 1}/{chunks} (seed {seed}): {ran:,} examples, {wall:,.0f} s, "
            f"{rate:.1f} examples/s",
            file=sys.stderr,
        )
    result = "pass, 0 failures" if failed is None else f"FAIL at seed {failed}"
    row = [
        today(),
        commit(),
        machine(),
        f"{ran:,}",
        f"{chunks} × {args.chunk:,}",
        result,
        f"{wall:,.0f} s",
        f"{ran / wall:.1f}" if wall else "—",
    ]
    print(" | ".join(str(cell) for cell in row))
    if not args.no_record:
        append_rows("Fuzz target — `benchmarks/fuzz.py`", COLUMNS, [row])
    return 0 if failed is None else 1


if __name__ == "__main__":
    sys.exit(main())
