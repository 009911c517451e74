"""What the secret scan adds per submission, per traced target and per grounded megabyte.

Timed in process, without I/O, on the bodies the test suite keeps valid:

- ``scan <type>``: ``telic.controller._scan.scan_submission`` on each artifact of the
  analyze_only happy path, the whole added cost of a clean submission (the body's strings are
  scanned as one text; nothing else runs unless it matches);
- ``scan Evidence <n> KiB``: the same for Evidence with ``n`` KiB of ordinary log content;
- ``backstop <type>``: the ledger's own scan of the same artifact (``telic.ledger._backstop``)
  right after the gate scanned its body, as in a submission (the detector's clean-string memo
  answers), and ``cold`` with the memo emptied first (what a write no gate saw costs);
  every ``scan`` sample above starts with an empty memo too, so it is a first scan;
- ``redact target``: ``redact`` of a clean and of a secret-bearing ``check_tool_action`` target;
- ``grounded text``: ``contains_secret`` over 1 MiB of this repository's own Python source, the
  cost grounding pays per selected megabyte;
- ``first scan``: importing detect-secrets and compiling the rules (once per process).

Run: ``python benchmarks/secret_scan.py [--repeat N] [--no-readme]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _common import COLUMNS, ROOT, append_rows, row, summary

from tests.telic.controller.builders import Run
from tests.telic.secret_corpus import corpus

HEADING = "Secret scan — `benchmarks/secret_scan.py`"


def _time(
    call: Callable[[], object], repeat: int, setup: Callable[[], object] | None = None
) -> dict[str, Any]:
    samples = []
    for _ in range(repeat):
        if setup is not None:
            setup()  # not timed
        started = time.perf_counter()
        call()
        samples.append(time.perf_counter() - started)
    return summary(samples)


def _first_scan() -> dict[str, Any]:
    code = (
        "import time; t = time.perf_counter(); from telic._secrets import warm; warm(); "
        "print(time.perf_counter() - t)"
    )
    samples = [
        float(
            subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
            ).stdout
        )
        for _ in range(5)
    ]
    return summary(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=2000)
    parser.add_argument("--no-readme", action="store_true")
    args = parser.parse_args()

    from telic._secrets import CLEAN_MEMO, contains_secret, redact, warm
    from telic.controller._scan import scan_submission
    from telic.ledger import NewArtifact
    from telic.ledger._backstop import refuse_secrets

    warm()
    b = Run(run_id="run-1", mode="analyze_only")
    bodies = {
        "ProblemFrame": b.frame(),
        "TaskContract": b.contract(),
        "PromptReview": b.prompt_review(),
        "WorkPlan": b.plan(),
        "Evidence": b.evidence(),
        "WorkResult": b.result(),
        "QualityReview": b.quality_review(),
        "ReleaseAudit": b.audit(),
        "UserReport": b.report(),
    }
    results: dict[str, dict[str, Any]] = {}
    for kind, body in bodies.items():
        size = len(json.dumps(body))
        results[f"scan {kind} ({size} B)"] = _time(
            lambda kind=kind, body=body: scan_submission(kind, body, ()),
            args.repeat,
            CLEAN_MEMO.clear,
        )
    for kind in ("ProblemFrame", "WorkPlan", "WorkResult"):
        body = bodies[kind]
        new = NewArtifact(
            artifact_id="a-1", type=kind, schema_version="1.0", producer="host", body=body
        )

        def gate(kind: str = kind, body: Any = body) -> None:
            CLEAN_MEMO.clear()
            scan_submission(kind, body, ())

        results[f"backstop {kind}, after the gate"] = _time(
            lambda new=new: refuse_secrets(None, (new,)), args.repeat, gate
        )
        results[f"backstop {kind}, cold"] = _time(
            lambda new=new: refuse_secrets(None, (new,)), args.repeat, CLEAN_MEMO.clear
        )
    line = "2026-12-01T10:00:00Z INFO worker-3 handled request /v1/items in 12 ms status=200\n"
    for kib in (1, 8, 32):
        content = (line * (kib * 1024 // len(line) + 1))[: kib * 1024]
        body = b.evidence() | {"content": content}
        results[f"scan Evidence {kib} KiB"] = _time(
            lambda body=body: scan_submission("Evidence", body, ()),
            max(50, args.repeat // kib),
            CLEAN_MEMO.clear,
        )
    clean = "pytest -q tests/test_parser.py"
    secret = f"curl -H 'Authorization: Bearer {corpus()[25].secret}' https://api.example.com"
    results["redact clean target"] = _time(lambda: redact(clean), args.repeat)
    results["redact target with a secret"] = _time(lambda: redact(secret), args.repeat)
    source = "".join(
        path.read_text(encoding="utf-8") for path in sorted((ROOT / "telic").rglob("*.py"))
    )
    megabyte = (source * (2**20 // len(source) + 1))[: 2**20]
    results["grounded text, 1 MiB of Python source"] = _time(lambda: contains_secret(megabyte), 10)
    results["first scan: import detect-secrets, build the rules"] = _first_scan()
    print(json.dumps(results, indent=2))
    if not args.no_readme:
        append_rows(HEADING, COLUMNS, [row(measure, stats) for measure, stats in results.items()])


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    main()
