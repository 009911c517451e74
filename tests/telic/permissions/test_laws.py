"""The laws of the permission algebra, as hypothesis properties over generated sets and layers."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, strategies as st

from telic.permissions import (
    Decision,
    Grant,
    Layer,
    authorize_action,
    glob_match,
    intersect,
    is_subset,
    protected_pattern,
)
from telic.permissions._paths import Refusal, repository_target
from telic.permissions._protected import MUTATING_REPOSITORY
from telic.protocol._types import (
    CAPABILITIES,
    MODES,
    BrowserPermissions,
    Capability,
    NetworkPermissions,
    PermissionSet,
    RepositoryPermissions,
    RuntimePermissions,
    ShellPermissions,
    SubagentPermissions,
)

from .conftest import FAKE_ROOT, fake_resolve

GLOBS = ["**", "src/**", "src/a.py", "src/*.py", "src/.env", "src/lib/**", "docs/**", ".git/**"]
COMMANDS = ["**", "npm test", "pytest -q", "make"]
RUNTIMES = ["**", "local", "api"]
DOMAINS = ["**", "example.com", "EXAMPLE.com", "localhost", "::1", "[::1]", "example.com."]

TARGETS: dict[Capability, list[str | None]] = {
    "repository.read": ["src/a.py", "src/.env", "src/lib/x.py", "docs/r.md", "link/r.md", "x"],
    "repository.write": [
        "src/a.py",
        "./src//a.py",
        ".git/config",
        ".git/hooks/pre-commit",
        ".GIT/config",
        ".github/workflows/ci.yml",
        "src/.env",
        "../x",
        "out/x",
        "C:/x",
        None,
    ],
    "repository.delete": ["src/a.py", "docs/r.md", "%2e%2e/x", "/repo/src/a.py", ".", ".env"],
    "shell.inspect": ["git.status", "git.diff", "git status", None],
    "shell.execute": ["npm test", "make", "npm test ", "make; id", None],
    "runtime.inspect": ["local", "api", "LOCAL", None],
    "runtime.restart": ["local", "api", None],
    "browser.inspect": ["http://localhost/", None],
    "browser.mutate": ["http://localhost/", None],
    "network.read": [
        "https://example.com/",
        "http://EXAMPLE.com:80",
        "https://example.com./",
        "http://[::1]/",
        "https://u:p@example.com/",
        "http://localhost/",
        None,
    ],
    "external.write": ["https://example.com/", None],
    "subagent.spawn": ["child", None],
}


PROTECTED_GRANTS = [".git/**", ".git/config", ".git/hooks/*", ".github/workflows/*", "src/.env"]
protected_grants = st.lists(st.sampled_from(PROTECTED_GRANTS), max_size=3, unique=True)


def scopes(pool: list[str]) -> st.SearchStrategy[list[str]]:
    return st.lists(st.sampled_from(pool), max_size=4, unique=True)


@st.composite
def permission_sets(draw: st.DrawFn) -> PermissionSet:
    # Built by hand: st.builds does not pass pydantic field names through the aliased signature.
    return PermissionSet(
        repository=RepositoryPermissions(
            read=draw(scopes(GLOBS)), write=draw(scopes(GLOBS)), delete=draw(scopes(GLOBS))
        ),
        shell=ShellPermissions(
            inspect=draw(st.booleans()), execute_allowlist=draw(scopes(COMMANDS))
        ),
        runtime=RuntimePermissions(inspect=draw(scopes(RUNTIMES)), restart=draw(scopes(RUNTIMES))),
        browser=BrowserPermissions(inspect=draw(st.booleans()), mutate_state=draw(st.booleans())),
        network=NetworkPermissions(
            read_domains=draw(scopes(DOMAINS)), external_write=draw(st.booleans())
        ),
        subagents=SubagentPermissions(
            spawn=draw(st.booleans()),
            maximum_children=draw(st.integers(0, 16)),
            maximum_depth=draw(st.integers(0, 4)),
        ),
    )


names = st.sampled_from(["mode", "authorization", "task_contract", "work_plan_node", "work_order"])
layers = st.one_of(
    st.builds(Layer.for_mode, st.sampled_from(MODES)),
    st.builds(Layer.from_permissions, names, permission_sets()),
    st.builds(
        Layer.from_permissions, names, permission_sets(), denied=st.none() | permission_sets()
    ),
)
layer_stacks = st.lists(layers, min_size=1, max_size=4)


@st.composite
def actions(draw: st.DrawFn) -> tuple[Capability, str | None]:
    capability = draw(st.sampled_from(CAPABILITIES))
    return capability, draw(st.sampled_from(TARGETS[capability]))


def decide(
    action: tuple[Capability, str | None], stack: list[Layer], granted: Sequence[str] = ()
) -> Decision:
    capability, target = action
    return authorize_action(
        capability,
        target,
        stack,
        repository_root=FAKE_ROOT,
        resolve=fake_resolve,
        protected_granted=granted,
    )


@given(action=actions(), stack=layer_stacks, at=st.integers(0, 4), granted=protected_grants)
def test_a_matching_deny_overrides_every_allow(
    action: tuple[Capability, str | None], stack: list[Layer], at: int, granted: list[str]
) -> None:
    everything = Layer("everything", allow=tuple(Grant(c) for c in CAPABILITIES))
    denier = Layer("policy", allow=everything.allow, deny=(Grant(action[0]),))
    stack = [everything, *stack]
    stack.insert(min(at, len(stack)), denier)
    decision = decide(action, stack, granted)
    assert not decision.allowed
    # The target was refused outright, or protected, or an explicit deny decided.
    assert decision.deciding_layer in (None, "protected") or decision.code == "explicitly_denied"


@given(
    action=actions(),
    stack=layer_stacks,
    extra=layers,
    at=st.integers(0, 4),
    granted=protected_grants,
)
def test_adding_a_layer_never_widens_a_decision(
    action: tuple[Capability, str | None],
    stack: list[Layer],
    extra: Layer,
    at: int,
    granted: list[str],
) -> None:
    wider = [*stack]
    wider.insert(min(at, len(wider)), extra)
    if decide(action, wider, granted).allowed:
        assert decide(action, stack, granted).allowed


@given(action=actions(), stack=layer_stacks, granted=protected_grants)
def test_no_write_or_delete_reaches_a_protected_path_without_a_covering_grant(
    action: tuple[Capability, str | None], stack: list[Layer], granted: list[str]
) -> None:
    decision = decide(action, stack, granted)
    scope = decision.scope
    if decision.allowed and action[0] in MUTATING_REPOSITORY and scope and protected_pattern(scope):
        assert any(glob_match(pattern, scope) for pattern in granted)
    everything = Layer("everything", allow=tuple(Grant(c, ("**",)) for c in CAPABILITIES))
    alone = decide(action, [everything])
    if action[0] in MUTATING_REPOSITORY and alone.scope and protected_pattern(alone.scope):
        assert (alone.allowed, alone.deciding_layer, alone.code) == (
            False,
            "protected",
            "protected_path",
        )


@given(
    action=actions(),
    stack=layer_stacks,
    fewer=protected_grants,
    more=protected_grants,
)
def test_a_protected_grant_only_lifts_the_protection_and_never_a_layer(
    action: tuple[Capability, str | None], stack: list[Layer], fewer: list[str], more: list[str]
) -> None:
    wider = [*fewer, *more]
    if decide(action, stack, fewer).allowed:
        assert decide(action, stack, wider).allowed  # more grants never narrow
    if decide(action, stack, wider).allowed:
        # ...and never allow what a single layer, granted the same, would not.
        for layer in stack:
            assert decide(action, [layer], wider).allowed


@given(action=actions(), stack=layer_stacks, order=st.randoms(use_true_random=False))
def test_the_verdict_does_not_depend_on_layer_order(
    action: tuple[Capability, str | None], stack: list[Layer], order: object
) -> None:
    shuffled = [*stack]
    order.shuffle(shuffled)  # type: ignore[attr-defined]
    assert decide(action, shuffled).allowed is decide(action, stack).allowed


@given(left=permission_sets(), right=permission_sets())
def test_an_intersection_is_a_subset_of_both_parents(
    left: PermissionSet, right: PermissionSet
) -> None:
    meet = intersect(left, right)
    assert is_subset(meet, left)
    assert is_subset(meet, right)


@given(left=permission_sets(), right=permission_sets())
def test_intersection_is_commutative_up_to_scope_order(
    left: PermissionSet, right: PermissionSet
) -> None:
    one, other = intersect(left, right), intersect(right, left)
    assert is_subset(one, other)
    assert is_subset(other, one)


@given(child=permission_sets(), parent=permission_sets(), action=actions())
def test_whatever_a_subset_allows_its_superset_allows(
    child: PermissionSet, parent: PermissionSet, action: tuple[Capability, str | None]
) -> None:
    if is_subset(child, parent) and decide(action, [Layer.from_permissions("c", child)]).allowed:
        assert decide(action, [Layer.from_permissions("p", parent)]).allowed


@given(left=permission_sets(), right=permission_sets(), action=actions())
def test_an_intersection_allows_only_what_both_parents_allow(
    left: PermissionSet, right: PermissionSet, action: tuple[Capability, str | None]
) -> None:
    if decide(action, [Layer.from_permissions("meet", intersect(left, right))]).allowed:
        assert decide(action, [Layer.from_permissions("left", left)]).allowed
        assert decide(action, [Layer.from_permissions("right", right)]).allowed


@given(permissions=permission_sets())
def test_subset_is_reflexive(permissions: PermissionSet) -> None:
    assert is_subset(permissions, permissions)


@given(a=permission_sets(), b=permission_sets(), c=permission_sets())
def test_subset_is_transitive(a: PermissionSet, b: PermissionSet, c: PermissionSet) -> None:
    middle = intersect(b, c)
    bottom = intersect(a, middle)
    assert is_subset(bottom, middle)
    assert is_subset(middle, c)
    assert is_subset(bottom, c)
    if is_subset(a, b) and is_subset(b, c):
        assert is_subset(a, c)


SEGMENTS = [
    "src",
    "a.py",
    ".env",
    ".",
    "..",
    "",
    "link",
    "out",
    "up",
    "docs",
    "%2e",
    "~",
    "x y",
    "C:",
    "$HOME",
    "%APPDATA%",
]


@given(
    segments=st.lists(st.sampled_from(SEGMENTS), max_size=6),
    absolute=st.booleans(),
)
def test_path_normalisation_is_idempotent(segments: list[str], absolute: bool) -> None:
    target = "/".join(segments)
    if absolute:
        target = f"{FAKE_ROOT}/{target}"
    once = repository_target(target, FAKE_ROOT, fake_resolve)
    if isinstance(once, Refusal):
        return
    assert repository_target(once, FAKE_ROOT, fake_resolve) == once
    assert not once.startswith("/")
    assert ".." not in once.split("/")
