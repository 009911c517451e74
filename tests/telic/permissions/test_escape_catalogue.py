"""The permission-escape catalogue: every attempted target reaches its recorded decision.

The catalogue (``escape_catalogue.json``) is data: traversal, encoded traversal, real symlinks
out of the repository, absolute paths, compound and look-alike shell commands, wildcard,
subdomain, userinfo, trailing-dot, IPv6 and non-http network targets, plus allowed controls.
Each entry runs against the layers a real run would stack in ``analyze_and_fix``: the mode, the
run authorization from start_run, and a task contract that may write only ``src/**``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from telic.permissions import (
    Decision,
    Grant,
    Layer,
    authorize_action,
    effective_authorization,
    start_run_authority,
)
from telic.protocol._types import CAPABILITIES, PermissionSet

from .conftest import Tree

CATALOGUE: list[dict[str, Any]] = json.loads(
    (Path(__file__).with_name("escape_catalogue.json")).read_text(encoding="utf-8")
)["entries"]
ALLOWLIST = ["npm test", "pytest -q"]
DOMAINS = ["example.com", "localhost", "127.0.0.1", "[::1]"]
SECRETS = ("hunter2", "user:", "@")


def _layers() -> list[Layer]:
    authority = start_run_authority(
        mode="analyze_and_fix",
        host_capabilities=CAPABILITIES,
        authorization_granted=[
            "repository.read",
            "repository.write",
            "shell.inspect",
            "shell.execute",
            "runtime.inspect",
            "browser.inspect",
            "network.read",
            "subagent.spawn",
        ],
        shell_execute_allowlist=ALLOWLIST,
        network_read_domains=DOMAINS,
    )
    wire = PermissionSet.empty().model_dump(by_alias=False)
    wire["repository"].update(read=["**"], write=["src/**"])
    wire["shell"].update(inspect=True, execute_allowlist=ALLOWLIST)
    wire["runtime"]["inspect"] = ["local"]
    wire["browser"]["inspect"] = True
    wire["network"]["read_domains"] = DOMAINS
    wire["subagents"].update(spawn=True, maximum_children=2, maximum_depth=1)
    return [
        Layer.for_mode("analyze_and_fix"),
        Layer.from_permissions(
            "authorization",
            effective_authorization(
                authority.mode, authority.granted_permissions(), authority.denied_permissions()
            ),
        ),
        Layer.from_permissions("task_contract", PermissionSet.model_validate(wire)),
    ]


def _target(entry: dict[str, Any], tree: Tree) -> str | None:
    target = entry["target"]
    if target is None:
        return None
    return str(target).replace("{root}", str(tree.root)).replace("{outside}", str(tree.outside))


def _decide(entry: dict[str, Any], tree: Tree, layers: list[Layer]) -> Decision:
    return authorize_action(
        entry["capability"], _target(entry, tree), layers, repository_root=str(tree.root)
    )


def test_the_catalogue_is_large_and_mostly_denials_with_allowed_controls() -> None:
    assert len(CATALOGUE) >= 50
    ids = [entry["id"] for entry in CATALOGUE]
    assert len(ids) == len(set(ids))
    expectations = [entry["expect"] for entry in CATALOGUE]
    assert expectations.count("deny") > expectations.count("allow") >= 5


@pytest.mark.parametrize("entry", CATALOGUE, ids=[entry["id"] for entry in CATALOGUE])
def test_every_catalogue_entry_reaches_its_decision(entry: dict[str, Any], tree: Tree) -> None:
    decision = _decide(entry, tree, _layers())
    assert decision.verdict == entry["expect"], decision.reason
    assert decision.code == entry["code"]
    if "decidingLayer" in entry:
        assert decision.deciding_layer == entry["decidingLayer"]
    if "scope" in entry:
        assert decision.scope == entry["scope"]


@pytest.mark.parametrize(
    "entry",
    [entry for entry in CATALOGUE if entry["expect"] == "deny"],
    ids=[entry["id"] for entry in CATALOGUE if entry["expect"] == "deny"],
)
def test_every_denial_holds(entry: dict[str, Any], tree: Tree) -> None:
    layers = _layers()
    assert not _decide(entry, tree, layers[::-1]).allowed, "the verdict depends on layer order"
    refused_outright = entry["code"] not in {
        "explicitly_denied",
        "not_granted",
        "out_of_scope",
        "target_required",
    }
    if refused_outright:
        # A malformed or escaping target can never be granted, not even by an every-scope layer.
        everything = Layer(
            "everything",
            allow=tuple(Grant(c) for c in CAPABILITIES)
            + tuple(Grant(c, ("**",)) for c in CAPABILITIES),
        )
        assert not _decide(entry, tree, [everything]).allowed
    decision = _decide(entry, tree, layers)
    if entry["capability"] == "network.read":
        assert decision.scope is None or not any(s in decision.scope for s in SECRETS)
