"""A separate OS process that writes to a ledger, driven by the concurrency and crash tests.

python ledger_worker.py race URL RUN_ID WORKER BACKEND
    Prints "ready", then for each line "<round>" on stdin tries to commit that round's step
    (expected version round + 1) and prints "won", "lost" or "error <message>".
python ledger_worker.py append URL RUN_ID BACKEND
    Prints "ready", then commits steps forever, printing "committed <artifact id>" after each
    commit returns. The crash test kills it with SIGKILL at random moments.
"""

from __future__ import annotations

import sys

import anyio
from ledgerkit import artifact, event, step

from telic._errors import LedgerConflict
from telic._secrets import warm
from telic.ledger import open_ledger


def _ready() -> None:
    # The ledger scans every record it commits; load the detector first, as a server does when
    # it opens, so that the kills land in commits and not in the detector's one-time import.
    warm()
    print("ready", flush=True)


async def race(url: str, run_id: str, worker: str) -> None:
    async with open_ledger(url) as ledger:
        _ready()
        for line in sys.stdin:
            if line.strip() == "quit":
                break
            round_ = int(line)
            new = artifact(f"round-{round_}-{worker}", "WorkResult", run_id=run_id)
            try:
                await step(ledger, run_id, round_ + 1, [new], [event(decision_summary=worker)])
            except LedgerConflict:
                print("lost", flush=True)
            except Exception as exc:  # reported to the parent, which fails the test
                print(f"error {type(exc).__name__}: {exc}", flush=True)
            else:
                print("won", flush=True)


async def append(url: str, run_id: str) -> None:
    padding = "x" * 4096  # a body big enough that blob writes take a moment
    async with open_ledger(url) as ledger:
        _ready()
        while True:
            version = (await ledger.get_run(run_id)).version
            name = f"step-{version}"
            body = {"id": name, "runId": run_id, "padding": padding}
            new = artifact(name, "WorkResult", run_id=run_id, body=body)
            await step(ledger, run_id, version, [new], [event(), event("artifact_recorded")])
            print(f"committed {name}", flush=True)


def main(argv: list[str]) -> None:
    command, *args = argv
    if command == "race":
        url, run_id, worker, backend = args
        anyio.run(race, url, run_id, worker, backend=backend)
    elif command == "append":
        url, run_id, backend = args
        anyio.run(append, url, run_id, backend=backend)
    else:
        raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
