"""The arguments of every tool as strict models; their JSON Schemas are the tools' input schemas.

Names, defaults and limits are Telic 1.0's (``docs/protocol.md`` §2). Models are strict (a
string is never a number, ``true`` is never an integer) and refuse unknown arguments by name,
so a misspelt or unsupported argument is an error, never silently dropped; the casting tools,
which the packet contract governs, answer one with the contract's ``unknown_field`` (a
``transcript`` handed to a child must be refused). The published schema is the model's JSON
Schema without titles, with optional arguments written as their plain type rather than
``anyOf [T, null]``.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    StringConstraints,
    ValidationError,
    ValidationInfo,
    model_validator,
)

from telic.protocol import (
    MAX_ARTIFACT_BYTES,
    MAX_BOUNDED_TEXT,
    MAX_FILE_BYTES,
    MAX_INVENTORY_FILES,
    MAX_ITEMS,
    MAX_REFERENCE_URI,
    MAX_SELECTED_FILES,
    MAX_TARGET,
    MAX_TOTAL_BYTES,
    REFERENCE_URI_PATTERN,
    Capability,
    HostArtifactType,
    Identifier,
    Mode,
    NativeSubagents,
    Topology,
)
from telic.server._schemas import compact_schema, inline
from telic_packets import MAX_SAFE_INTEGER, PacketRefusal

RefUri = Annotated[
    str,
    StringConstraints(min_length=1, max_length=MAX_REFERENCE_URI, pattern=REFERENCE_URI_PATTERN),
]
Positive = Annotated[int, Field(ge=1, le=MAX_SAFE_INTEGER)]
Version = Positive
Request = Annotated[
    str, StringConstraints(min_length=1, max_length=MAX_BOUNDED_TEXT, pattern=r"\S")
]
CastTypeName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_.-]{0,63}$")]
Count = Annotated[int, Field(ge=0, le=MAX_SAFE_INTEGER)]
Capabilities = Annotated[list[Capability], Field(max_length=MAX_ITEMS)]


class ToolArgs(BaseModel):
    """Base of every tool's arguments: strict values, unknown arguments refused."""

    model_config = ConfigDict(
        strict=True,
        extra="forbid",
        frozen=True,
        hide_input_in_errors=True,
        use_attribute_docstrings=True,
    )

    @classmethod
    def published(cls) -> type[ToolArgs]:
        """The model whose JSON Schema is published as the tool's input schema (itself)."""
        return cls


class RunArgs(ToolArgs):
    """A run id alone (get_next_action, get_run, verify_run, get_digest)."""

    run_id: Identifier


class TokenArgs(RunArgs):
    """A run id with the optimistic-concurrency tokens of a state-changing call: the current
    NextAction's id (``action:<runId>:<version>``) and the run version the caller last saw."""

    action_id: Identifier
    expected_run_version: Version


class CancelArgs(TokenArgs):
    """telic_cancel_run."""


NeedCode = Literal[
    "locate", "verify_claim", "reproduce", "measure", "diagnose", "review", "synthesize", "draft"
]


class CastTypeEntry(ToolArgs):
    """A cast-type registry entry the user enables for a run (camelCase, as in the packets)."""

    castType: CastTypeName  # noqa: N815 - the packet contract's wire name
    """Registry key, e.g. explore."""
    enabled: bool = False
    """Allow casts of this type."""
    ceilingTurns: Positive  # noqa: N815
    """Max maxTurns per cast."""
    ceilingTokens: Positive  # noqa: N815
    """Max maxTotalTokens per cast."""
    readOnly: bool = True  # noqa: N815
    """Children get no write permissions."""
    allowedNeedCodes: Annotated[list[NeedCode], Field(min_length=1, max_length=8)]  # noqa: N815
    """Needs this type serves."""


PRIOR_RUN_ID_PATTERN: Final = (
    r"^(?:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-"
    r"[0-9a-fA-F]{12}|00000000-0000-0000-0000-000000000000|[fF]{8}-[fF]{4}-[fF]{4}-[fF]{4}-"
    r"[fF]{12})$"
)
"""A UUID as the original accepts it: version nibble 1-8, variant 8, 9, a or b; nil and max."""


class StartRunArgs(ToolArgs):
    """telic_start_run."""

    original_request: Request
    """The user's request, verbatim."""
    mode: Mode
    host_name: Annotated[str, StringConstraints(min_length=1, max_length=128)] = "mcp-host"
    native_subagents: NativeSubagents = "unknown"
    """Can the host start child agents?"""
    host_capabilities: Capabilities = ["repository.read"]
    """What the host can do."""
    authorization_granted: Capabilities | None = None
    """What the user granted (omit: mode defaults)."""
    authorization_denied: Capabilities = []
    """What the user denied."""
    shell_execute_allowlist: Annotated[
        list[Annotated[str, StringConstraints(min_length=1, max_length=2048)]],
        Field(max_length=MAX_ITEMS),
    ] = []
    """Exact commands (needs shell.execute)."""
    network_read_domains: Annotated[
        list[Annotated[str, StringConstraints(min_length=1, max_length=253)]],
        Field(max_length=MAX_ITEMS),
    ] = []
    """Domains (needs network.read)."""
    cast_types: Annotated[list[CastTypeEntry], Field(max_length=16)] | None = None
    """Subagent cast types the user enables."""
    protected_paths_granted: Annotated[
        list[Annotated[str, StringConstraints(min_length=1, max_length=1024)]],
        Field(max_length=64),
    ] = []
    """Protected paths (.git, .github, .env*) the user lets writes and deletes reach."""
    prior_run_id: Annotated[str, StringConstraints(pattern=PRIOR_RUN_ID_PATTERN)] | None = None
    """An ended run (completed, partial, blocked, cancelled) of this repository to follow up;
    its Evidence may then be cited."""
    topology_override: Topology | None = None
    """micro: a short report_only question needing no change (frame, spot review, report);
    standard: the full path; forensic: adds an evidence re-verifying review. Omit: the 1.0 path."""


class Budget(ToolArgs):
    """The grounding budget; every limit is optional."""

    max_files: Annotated[int, Field(ge=1, le=MAX_SELECTED_FILES)] | None = None
    """Files to select (default 48)."""
    max_file_bytes: Annotated[int, Field(ge=1, le=MAX_FILE_BYTES)] | None = None
    """Bytes per file (default 128 KiB)."""
    max_total_bytes: Annotated[int, Field(ge=1, le=MAX_TOTAL_BYTES)] | None = None
    """Bytes in all (default 512 KiB)."""
    max_inventory_files: Annotated[int, Field(ge=1, le=MAX_INVENTORY_FILES)] | None = None
    """Files to inventory (default 20,000)."""


class GroundArgs(TokenArgs):
    """telic_ground_context."""

    active_paths: Annotated[
        list[Annotated[str, StringConstraints(min_length=1, max_length=1024)]],
        Field(max_length=MAX_ITEMS),
    ] = []
    """Paths the user works on (ranked first)."""
    budget: Budget | None = None


class SubmitArgs(TokenArgs):
    """telic_submit_artifact: an artifact (body XOR body_json) or a clarification answer."""

    artifact_type: HostArtifactType | None = None
    body: dict[str, Any] | None = None
    body_json: (
        Annotated[str, StringConstraints(min_length=2, max_length=MAX_ARTIFACT_BYTES)] | None
    ) = None
    """The body as JSON text (instead of body)."""
    source_refs: Annotated[list[RefUri], Field(max_length=MAX_ITEMS)] = []
    """Refs the artifact derives from."""
    clarification_response: (
        Annotated[str, StringConstraints(min_length=1, max_length=MAX_BOUNDED_TEXT)] | None
    ) = None
    """The user's choice id (instead of an artifact)."""

    @model_validator(mode="after")
    def _one_path(self) -> Self:
        artifact = self.artifact_type is not None or self.body is not None
        artifact = artifact or self.body_json is not None
        if self.clarification_response is not None:
            if artifact or self.source_refs:
                raise ValueError(
                    "clarification_response excludes artifact_type, body, body_json and source_refs"
                )
            return self
        if self.artifact_type is None:
            raise ValueError("artifact_type is required unless clarification_response is given")
        if (self.body is None) == (self.body_json is None):
            raise ValueError("give exactly one of body or body_json")
        return self


class ListRunsArgs(ToolArgs):
    """telic_list_runs."""

    limit: Annotated[int, Field(ge=1, le=100)] = 20


class GetArtifactArgs(RunArgs):
    """telic_get_artifact."""

    artifact_id: Identifier


class GetTraceArgs(RunArgs):
    """telic_get_trace."""

    after_sequence: Count = 0
    limit: Annotated[int, Field(ge=1, le=500)] = 100


class CheckToolActionArgs(RunArgs):
    """telic_check_tool_action, in both dialects.

    Ours: ``run_id, capability, target``. The original Telic's: ``run_id, action_id,
    expected_run_version, capability, target?``: the two token arguments go together, and with
    them ``target`` may be left out (a scoped grant then refuses: it needs a target).
    """

    action_id: Identifier | None = None
    expected_run_version: Count | None = None  # 0 passes, and is always stale
    capability: Capability
    target: Annotated[str, StringConstraints(min_length=1, max_length=MAX_TARGET)] | None = None
    """Path, command or URL acted on (required without action_id)."""

    @model_validator(mode="after")
    def _one_dialect(self) -> Self:
        if (self.action_id is None) != (self.expected_run_version is None):
            raise ValueError("action_id and expected_run_version go together (or neither)")
        if self.action_id is None and self.target is None:
            raise ValueError(
                "target is required unless action_id and expected_run_version are given"
            )
        return self


class Routing(ToolArgs):
    """Why a parent casts a child (camelCase, as in the packet contract)."""

    needCode: NeedCode  # noqa: N815 - the packet contract's wire name
    """The need that justifies the child."""
    text: Annotated[str, StringConstraints(min_length=1, max_length=200, pattern=r"\S")]
    """Why, in words."""
    expectedEvidence: Annotated[  # noqa: N815
        list[
            Literal[
                "observation", "measurement", "failure", "file_state", "test_result", "citation"
            ]
        ],
        Field(min_length=1, max_length=4),
    ]
    """Evidence kinds the packet must hold."""
    acceptance: Annotated[
        list[Annotated[str, StringConstraints(min_length=1, max_length=120)]],
        Field(max_length=6),
    ] = []
    """Checkable criteria."""


Brief = Annotated[str, StringConstraints(min_length=1, max_length=1000)]
Pointers = Annotated[
    list[Annotated[str, StringConstraints(min_length=1, max_length=512)]], Field(max_length=8)
]
PacketRefs = Annotated[list[str], Field(max_length=8)]


class CastBudgetArgs(ToolArgs):
    """The child's budget (camelCase, as in the packet contract)."""

    maxTurns: Positive  # noqa: N815
    """Turns the child may take."""
    maxTotalTokens: Positive  # noqa: N815
    """Tokens the child may spend."""
    maxWallMs: Positive | None = None  # noqa: N815
    """Wall-clock cap in ms."""


class CastToolArgs(RunArgs):
    """Base of the casting tools' arguments: an unknown argument is refused by name.

    The packet contract refuses a handoff with a field it does not define (``transcript``,
    ``history``, ``messages``: children get fresh context), so these tools answer an unknown
    argument with the contract's ``unknown_field`` instead of dropping it, naming the tool that
    the validation context's ``tool`` names.
    """

    @model_validator(mode="wrap")
    @classmethod
    def _refuse_unknown(
        cls, data: Any, handler: ModelWrapValidatorHandler[Self], info: ValidationInfo
    ) -> Self:
        try:
            return handler(data)
        except ValidationError as exc:
            unknown = [
                str(error["loc"][0])
                for error in exc.errors(include_url=False, include_input=False)
                if error["type"] == "extra_forbidden" and len(error["loc"]) == 1
            ]
            if unknown:
                name = unknown[0][:40]
                tool = str((info.context or {}).get("tool", "a casting tool"))
                raise PacketRefusal(
                    "unknown_field",
                    f"{tool} takes no argument {name!r}"
                    + (
                        " (children get fresh context, never the parent transcript)"
                        if tool == "telic_cast"
                        else ""
                    ),
                ) from None
            raise


class CastShape(CastToolArgs):
    """telic_cast as published: the shape a host should send."""

    cast_type: CastTypeName
    routing: Routing
    budget: CastBudgetArgs
    brief: Brief
    """Handoff: point at things, never paste."""
    pointers: Pointers = []
    """artifact:// or repo:// refs to read."""
    packet_refs: PacketRefs = []
    """Earlier packet ids (pk_) to build on."""
    parent_cast_id: Identifier | None = None
    """A child casting a grandchild: its own cast id."""


class CastArgs(CastShape):
    """telic_cast, as checked: the routing reason, budget and cast type reach the contract raw.

    The contract tests a cast's faults in its own order (routing, cast type, budget, …) and
    answers each with its code (``missing_routing_reason``, ``unknown_need_code``,
    ``cast_type_disabled``, ``budget_missing``, …), so these three are not validated here: an
    argument error would hide the contract's code. ``CastShape`` is what is published.
    """

    cast_type: Annotated[str, StringConstraints(max_length=64)]
    routing: Any = None
    budget: Any = None

    @classmethod
    def published(cls) -> type[ToolArgs]:
        """The shape a host should send (``CastShape``)."""
        return CastShape


class CastProgressArgs(CastToolArgs):
    """telic_cast_progress."""

    cast_id: Identifier
    turns: Count = 0
    tool_calls: Count = 0
    input_tokens: Count = 0
    output_tokens: Count = 0


class ReturnPacketArgs(CastToolArgs):
    """telic_return_packet."""

    cast_id: Identifier
    # Published as an object (what a packet is); any other value still reaches the packet
    # contract, whose `not_a_packet` repair request tells the child how to answer.
    packet: Annotated[Any, Field(json_schema_extra={"type": "object"})]
    """{claim, evidence[], completed[], remaining[]}."""


def _clean(node: Any) -> Any:
    if isinstance(node, dict):
        node = {k: _clean(v) for k, v in node.items() if k != "title"}
        if node.get("additionalProperties") is True:
            del node["additionalProperties"]  # the default: saying it is noise
        if node.get("maximum") == MAX_SAFE_INTEGER and node.get("type") == "integer":
            del node["maximum"]  # JSON's safe-integer bound: every integer has it, so it is noise
        options = node.get("anyOf")
        if isinstance(options, list) and len(options) == 2 and {"type": "null"} in options:
            (kept,) = [o for o in options if o != {"type": "null"}]
            node.pop("anyOf")
            if node.get("default", ...) is None:
                node.pop("default")
            node = {**kept, **node}
        return node
    if isinstance(node, list):
        return [_clean(v) for v in node]
    return node


def input_schema(model: type[ToolArgs]) -> dict[str, Any]:
    """Return the published input schema of a tool's argument model.

    It is the model's JSON Schema without titles, without the models' own docstrings and without
    JSON's safe-integer bound; names, types, defaults and limits are unchanged. An argument
    whose name and limits say it all (or that the workflow prompt explains, as the run tokens)
    has no docstring, so that its schema does not fill the host's context with a description.
    Every sub-schema is written in place: no ``$ref``, no ``$defs``. Strict-mode converters (the
    OpenAI Agents SDK's, for one) refuse a reference in a schema an MCP server lists, so a
    shared sub-schema would cost the tool its strict mode; every object but the free-form
    artifact ``body`` and ``packet`` is closed.
    """
    schema = model.published().model_json_schema(by_alias=True, mode="validation")
    cleaned: dict[str, Any] = _clean(schema)
    cleaned.pop("description", None)
    for definition in cleaned.get("$defs", {}).values():
        # Nested models are the packet contract's camelCase objects: their names say it all.
        definition.pop("description", None)
        for field in definition.get("properties", {}).values():
            field.pop("description", None)
    inlined: dict[str, Any] = inline(cleaned)
    return inlined


OUTPUT_DIALECT: Final = "http://json-schema.org/draft-07/schema#"
"""The dialect every ``outputSchema`` declares (see ``output_schema``)."""
SHARED_KEYWORDS: Final = frozenset(
    {"$defs", "$ref", "anyOf", "const", "default", "description", "items", "properties"}
    | {"required", "type"}
)
"""The keywords an ``outputSchema`` may use: each means the same in draft-07 and 2020-12
(``items`` as one schema, ``$ref`` without siblings, ``$defs`` reached by JSON pointer)."""


def output_schema(model: type[BaseModel]) -> dict[str, Any]:
    """Return the published output schema of a tool's result model (as the wire has it).

    It declares draft-07 (``OUTPUT_DIALECT``). A client checks a tool's schema against its
    dialect's meta-schema before it validates the first result of each session (the official
    Python SDK does, once per tool per session), and 2020-12's meta-schema, with its dynamic
    references, costs about 30 times draft-07's: 190 ms against 12 ms for the fifteen tools on
    the reference machine, paid in the host's first run. The schemas use only keywords that
    mean the same in both (``SHARED_KEYWORDS``; a test holds it), so validation is unchanged.
    """
    # Models' own docstrings and ``additionalProperties: true`` (the default) go, and titles
    # (``compact_schema``); nullable fields stay ``anyOf [T, null]``: a result may hold null.
    schema = model.model_json_schema(by_alias=True, mode="serialization")
    return {"$schema": OUTPUT_DIALECT, **compact_schema(_quiet(schema, top=True))}


def _quiet(node: Any, top: bool = False) -> Any:
    if isinstance(node, list):
        return [_quiet(v) for v in node]
    if not isinstance(node, dict):
        return node
    quiet = {
        k: _quiet(v) for k, v in node.items() if not (k == "additionalProperties" and v is True)
    }
    if "properties" in quiet and not top:
        quiet.pop("description", None)  # a nested model's docstring: its keys say it all
    return quiet
