"""``telic init`` writes each host's files in its documented format, merges, and is idempotent."""

from __future__ import annotations

import json
import shlex
import tomllib
from pathlib import Path

import pytest

from telic import UsageError
from telic.hosts._dialects import CLAUDE_MATCHER as MATCHER, CODEX_MATCHER, CURSOR_WRITE_MATCHER
from telic.hosts._kits import (
    BEGIN,
    DEFAULT_CAST_TURNS,
    END,
    FORWARDED_ENV,
    HOSTS,
    RESIDENT_BY_DEFAULT,
    cast_turn_ceiling,
    check_kits,
    diff,
    plan_kit,
    telic_command,
    write_kit,
)
from telic.hosts._texts import AGENT_TEXT, SKILL_TEXT
from telic.server import WORKFLOW_INSTRUCTIONS

COMMAND = ["/opt/telic/bin/telic"]
SERVE = ["serve", "--resident"] if RESIDENT_BY_DEFAULT else ["serve"]
"""What a kit runs by default: the resident server where it runs (POSIX)."""


def init(root: Path, host: str) -> list[str]:
    changes = plan_kit(host, root, COMMAND)
    write_kit(root, changes)
    return [c.path for c in changes if c.changed]


def front_matter(text: str) -> dict[str, object]:
    """Parse the YAML front matter the kits write (one ``key: JSON scalar`` a line)."""
    assert text.startswith("---\n")
    head, _, _ = text[4:].partition("\n---\n")
    fields: dict[str, object] = {}
    for line in head.splitlines():
        key, _, value = line.partition(":")
        fields[key] = json.loads(value) if value.strip() else None
    return fields


def test_claude_code_gets_its_mcp_server_hook_subagent_and_skill(tmp_path: Path) -> None:
    init(tmp_path, "claude-code")
    server = json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]["telic"]
    assert server == {
        "command": COMMAND[0],
        "args": ["--repository-root", str(tmp_path), *SERVE],
    }
    hooks = json.loads((tmp_path / ".claude/settings.json").read_text())["hooks"]
    (pre,) = hooks["PreToolUse"]
    (post,) = hooks["PostToolUse"]
    assert pre["matcher"] == MATCHER
    assert post["matcher"] == "mcp__telic__.*"
    # A child's start binds it to its cast and its stop checks its return, for every agent type.
    (start,) = hooks["SubagentStart"]
    (stop,) = hooks["SubagentStop"]
    assert "matcher" not in start
    # Only the PreToolUse hook fails closed: a failed stop check must not keep a child running.
    assert start["hooks"] == stop["hooks"] == post["hooks"]
    assert pre["hooks"] == [{**post["hooks"][0], "onFailure": "block"}]
    (action,) = pre["hooks"]
    assert action["type"] == "command"
    assert shlex.split(action["command"]) == [
        COMMAND[0],
        "--repository-root",
        str(tmp_path),
        "hook",
        "claude-code",
    ]
    agent = (tmp_path / ".claude/agents/telic-cast.md").read_text()
    assert front_matter(agent) == {
        "name": "telic-cast",
        "description": front_matter(agent)["description"],
        "tools": "Read, Grep, Glob",
        "maxTurns": DEFAULT_CAST_TURNS,
    }
    assert "return one evidence packet" in agent
    assert agent.endswith(AGENT_TEXT)
    skill = (tmp_path / ".claude/skills/telic-workflow/SKILL.md").read_text()
    assert front_matter(skill)["name"] == "telic-workflow"
    assert WORKFLOW_INSTRUCTIONS in skill


def test_claude_code_pre_allows_every_telic_tool_once(tmp_path: Path) -> None:
    # Claude Code's permission rule for every tool of one MCP server is ``mcp__<server>``: with
    # it, telic_start_run runs in any permission mode (``claude -p`` included) before any run
    # is live, when the hook says nothing.
    init(tmp_path, "claude-code")
    init(tmp_path, "claude-code")
    settings = json.loads((tmp_path / ".claude/settings.json").read_text())
    assert settings["permissions"]["allow"] == ["mcp__telic"]


def test_the_cast_agents_turn_cap_is_the_largest_enabled_ceiling(tmp_path: Path) -> None:
    repo, state = tmp_path / "repo", tmp_path / "state"
    repo.mkdir()
    state.mkdir()
    assert cast_turn_ceiling(state, repo) == DEFAULT_CAST_TURNS
    entry = (
        '[[cast_types]]\ncastType = "{}"\nenabled = {}\nceilingTurns = {}\n'
        'ceilingTokens = 9000\nallowedNeedCodes = ["locate"]\n'
    )
    (state / "telic.toml").write_text(
        entry.format("scout", "true", 12) + entry.format("big", "false", 40)
    )
    assert cast_turn_ceiling(state, repo) == 12  # the disabled type's 40 does not count
    write_kit(repo, plan_kit("claude-code", repo, COMMAND, cast_turns=12))
    agent = (repo / ".claude/agents/telic-cast.md").read_text()
    assert front_matter(agent)["maxTurns"] == 12
    (current,) = check_kits(repo, COMMAND, cast_turns=12)
    (stale,) = check_kits(repo, COMMAND, cast_turns=DEFAULT_CAST_TURNS)
    assert ".claude/agents/telic-cast.md" in stale.detail
    assert "differs" not in current.detail


def test_a_cast_turn_cap_below_one_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"init\.cast_turns"):
        plan_kit("claude-code", tmp_path, COMMAND, cast_turns=0)
    assert list(tmp_path.iterdir()) == []


def test_the_hook_matcher_is_a_regex_that_covers_the_mapped_tools() -> None:
    import re

    pattern = re.compile(f"^(?:{MATCHER})$")
    tools = ("Read", "Write", "Edit", "Bash", "Agent", "Task", "mcp__telic__telic_cast")
    for tool in (*tools, "mcp__x__y"):
        assert pattern.match(tool), tool
    assert not pattern.match("TodoWrite")


def hook_words(root: Path, host: str) -> list[str]:
    return [COMMAND[0], "--repository-root", str(root), "hook", host]


def test_codex_gets_its_server_hooks_cast_agent_and_an_agents_section(tmp_path: Path) -> None:
    init(tmp_path, "codex")
    config = tomllib.loads((tmp_path / ".codex/config.toml").read_text())
    assert config["mcp_servers"]["telic"] == {
        "command": COMMAND[0],
        "args": ["--repository-root", str(tmp_path), *SERVE],
        "env_vars": list(FORWARDED_ENV),
        "required": True,
    }
    assert {"TELIC_STATE_DIR", "XDG_STATE_HOME", "TELIC_DATABASE_URL"} <= set(FORWARDED_ENV)
    hooks = json.loads((tmp_path / ".codex/hooks.json").read_text())["hooks"]
    assert set(hooks) == {
        "PreToolUse",
        "PermissionRequest",
        "PostToolUse",
        "SubagentStart",
        "SubagentStop",
    }
    for event, matcher in [
        ("PreToolUse", CODEX_MATCHER),
        ("PermissionRequest", CODEX_MATCHER),
        ("PostToolUse", "mcp__telic__.*"),
        ("SubagentStart", None),  # every agent type: each child must be bound or denied
        ("SubagentStop", None),
    ]:
        (group,) = hooks[event]
        assert group.get("matcher") == matcher
        (action,) = group["hooks"]
        assert action["type"] == "command"
        assert shlex.split(action["command"]) == hook_words(tmp_path, "codex")
    agent = tomllib.loads((tmp_path / ".codex/agents/telic-cast.toml").read_text())
    assert agent == {
        "name": "telic-cast",
        "description": agent["description"],
        "sandbox_mode": "read-only",
        "developer_instructions": AGENT_TEXT,
    }
    agents = (tmp_path / "AGENTS.md").read_text()
    assert agents.startswith(BEGIN)
    assert agents.rstrip().endswith(END)
    assert WORKFLOW_INSTRUCTIONS in agents


def test_cursor_gets_its_mcp_server_hooks_and_a_rule(tmp_path: Path) -> None:
    init(tmp_path, "cursor")
    server = json.loads((tmp_path / ".cursor/mcp.json").read_text())["mcpServers"]["telic"]
    assert server["args"][-len(SERVE) :] == SERVE
    document = json.loads((tmp_path / ".cursor/hooks.json").read_text())
    assert document["version"] == 1
    hooks = document["hooks"]
    assert set(hooks) == {
        "preToolUse",
        "beforeShellExecution",
        "beforeMCPExecution",
        "beforeReadFile",
        "subagentStart",
        "afterMCPExecution",
    }
    for event, entries in hooks.items():
        (entry,) = entries
        assert shlex.split(entry["command"]) == hook_words(tmp_path, "cursor"), event
    assert hooks["preToolUse"][0]["matcher"] == CURSOR_WRITE_MATCHER
    rule = (tmp_path / ".cursor/rules/telic-workflow.mdc").read_text()
    fields = front_matter(rule)
    assert set(fields) == {"description", "globs", "alwaysApply"}
    assert fields["alwaysApply"] is False
    assert fields["globs"] is None
    assert rule.endswith(SKILL_TEXT)


def test_vscode_gets_its_mcp_server_and_pretooluse_hooks(tmp_path: Path) -> None:
    init(tmp_path, "vscode")
    server = json.loads((tmp_path / ".vscode/mcp.json").read_text())["servers"]["telic"]
    assert server == {
        "type": "stdio",
        "command": COMMAND[0],
        "args": ["--repository-root", str(tmp_path), *SERVE],
    }
    hooks = json.loads((tmp_path / ".github/hooks/telic.json").read_text())["hooks"]
    (pre,) = hooks["PreToolUse"]
    (post,) = hooks["PostToolUse"]
    assert pre["matcher"] == MATCHER
    assert post["matcher"] == "mcp__telic__.*"
    for group in (pre, post):
        (action,) = group["hooks"]
        assert action["type"] == "command"
        assert shlex.split(action["command"]) == hook_words(tmp_path, "vscode")


def test_merging_keeps_the_users_cursor_hooks_and_replaces_only_telics(tmp_path: Path) -> None:
    (tmp_path / ".cursor").mkdir()
    mine = {"version": 1, "hooks": {"beforeShellExecution": [{"command": "./audit.sh"}]}}
    (tmp_path / ".cursor/hooks.json").write_text(json.dumps(mine))
    init(tmp_path, "cursor")
    write_kit(tmp_path, plan_kit("cursor", tmp_path, ["/moved/telic"]))
    hooks = json.loads((tmp_path / ".cursor/hooks.json").read_text())["hooks"]
    shell = hooks["beforeShellExecution"]
    assert shell[0] == {"command": "./audit.sh"}
    assert len(shell) == 2
    assert shell[1]["command"].startswith("/moved/telic ")


@pytest.mark.parametrize("host", HOSTS)
def test_init_twice_changes_nothing_the_second_time(tmp_path: Path, host: str) -> None:
    assert init(tmp_path, host)
    snapshot = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert init(tmp_path, host) == []
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == snapshot
    assert diff(plan_kit(host, tmp_path, COMMAND)) == ""


def test_merging_keeps_the_users_other_servers_and_hooks(tmp_path: Path) -> None:
    mine = {"mcpServers": {"github": {"command": "gh-mcp", "args": [], "env": {"T": "1"}}}}
    (tmp_path / ".mcp.json").write_text(json.dumps(mine, indent=2) + "\n")
    (tmp_path / ".claude").mkdir()
    settings = {
        "permissions": {"allow": ["Bash(ls)"]},
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "x"}]}]
        },
    }
    (tmp_path / ".claude/settings.json").write_text(json.dumps(settings))
    init(tmp_path, "claude-code")
    servers = json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]
    assert servers["github"] == mine["mcpServers"]["github"]
    assert set(servers) == {"github", "telic"}
    merged = json.loads((tmp_path / ".claude/settings.json").read_text())
    assert merged["permissions"] == {"allow": ["Bash(ls)", "mcp__telic"]}
    assert merged["hooks"]["PreToolUse"][0] == settings["hooks"]["PreToolUse"][0]
    assert len(merged["hooks"]["PreToolUse"]) == 2


def test_a_moved_telic_replaces_its_own_hook_instead_of_adding_one(tmp_path: Path) -> None:
    init(tmp_path, "claude-code")
    changes = plan_kit("claude-code", tmp_path, ["/elsewhere/telic"])
    write_kit(tmp_path, changes)
    hooks = json.loads((tmp_path / ".claude/settings.json").read_text())["hooks"]
    assert len(hooks["PreToolUse"]) == 1
    assert hooks["PreToolUse"][0]["hooks"][0]["command"].startswith("/elsewhere/telic ")


def test_a_codex_config_keeps_every_other_byte(tmp_path: Path) -> None:
    original = (
        '# my settings\nmodel = "o4"\n\n[mcp_servers.github]\ncommand = "gh"\n'
        "args = []  # keep this comment\n"
    )
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex/config.toml").write_text(original)
    init(tmp_path, "codex")
    merged = (tmp_path / ".codex/config.toml").read_text()
    assert merged.startswith(original)
    stale = merged.replace(COMMAND[0], "/old/telic")
    (tmp_path / ".codex/config.toml").write_text(stale + "\n[profile]\nx = 1\n")
    init(tmp_path, "codex")
    again = tomllib.loads((tmp_path / ".codex/config.toml").read_text())
    assert again["mcp_servers"]["telic"]["command"] == COMMAND[0]
    assert again["profile"] == {"x": 1}
    assert again["model"] == "o4"
    assert "# keep this comment" in (tmp_path / ".codex/config.toml").read_text()


def test_agents_md_keeps_the_users_text_around_the_marked_section(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("# House rules\n\nBe kind.\n")
    init(tmp_path, "codex")
    first = (tmp_path / "AGENTS.md").read_text()
    assert first.startswith("# House rules\n\nBe kind.\n\n" + BEGIN)
    (tmp_path / "AGENTS.md").write_text(first + "\nAfter.\n")
    init(tmp_path, "codex")
    second = (tmp_path / "AGENTS.md").read_text()
    assert second.count(BEGIN) == 1
    assert second.endswith("\nAfter.\n")


@pytest.mark.parametrize(
    ("host", "path", "text", "rule"),
    [
        ("claude-code", ".mcp.json", "{not json", "init.json"),
        ("cursor", ".cursor/mcp.json", "[1, 2]", "init.json"),
        ("claude-code", ".claude/settings.json", '{"hooks": []}', "init.json"),
        ("codex", ".codex/config.toml", "[mcp_servers\n", "init.toml"),
        (
            "codex",
            ".codex/config.toml",
            "mcp_servers = { telic = { command = 'x' } }\n",
            "init.toml",
        ),
        ("codex", "AGENTS.md", f"{BEGIN}\nno end\n", "init.markdown"),
    ],
)
def test_a_file_that_cannot_be_merged_is_refused_and_nothing_is_written(
    tmp_path: Path, host: str, path: str, text: str, rule: str
) -> None:
    (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / path).write_text(text)
    with pytest.raises(UsageError, match=rule):
        plan_kit(host, tmp_path, COMMAND)
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == [tmp_path / path]


def test_an_unknown_host_or_a_relative_root_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"init\.host"):
        plan_kit("emacs", tmp_path, COMMAND)
    with pytest.raises(UsageError, match=r"init\.root"):
        plan_kit("cursor", Path("relative"), COMMAND)


def test_doctor_checks_only_installed_kits_and_names_stale_files(tmp_path: Path) -> None:
    assert check_kits(tmp_path, [str(Path(__file__))]) == []
    init(tmp_path, "cursor")
    (tmp_path / ".cursor/rules/telic-workflow.mdc").write_text("edited\n")
    (check,) = check_kits(tmp_path, COMMAND)
    assert check.name == "kit cursor"
    assert not check.ok
    assert ".cursor/rules/telic-workflow.mdc" in check.detail


@pytest.mark.parametrize(
    ("host", "removed", "edited"),
    [
        ("claude-code", ".claude/agents/telic-cast.md", ".claude/settings.json"),
        ("codex", ".codex/hooks.json", ".codex/agents/telic-cast.toml"),
        ("cursor", ".cursor/hooks.json", ".cursor/mcp.json"),
        ("vscode", ".github/hooks/telic.json", ".vscode/mcp.json"),
    ],
)
def test_doctor_names_each_hosts_missing_and_stale_files(
    tmp_path: Path, host: str, removed: str, edited: str
) -> None:
    command = telic_command()
    write_kit(tmp_path, plan_kit(host, tmp_path, command))
    (tmp_path / removed).unlink()
    (tmp_path / edited).write_text((tmp_path / edited).read_text().replace("telic", "telix"))
    (check,) = check_kits(tmp_path, command)
    assert check.name == f"kit {host}"
    assert not check.ok
    assert f"missing: {removed}" in check.detail
    assert f"differs from this telic's kit: {edited}" in check.detail
    write_kit(tmp_path, plan_kit(host, tmp_path, command))
    (again,) = check_kits(tmp_path, command)
    assert again.ok, again.detail


def test_doctor_passes_a_current_kit_whose_command_runs(tmp_path: Path) -> None:
    command = telic_command()
    write_kit(tmp_path, plan_kit("claude-code", tmp_path, command))
    (check,) = check_kits(tmp_path, command)
    assert check.ok, check.detail


def test_the_running_telic_is_named_by_an_absolute_path() -> None:
    command = telic_command()
    assert Path(command[0]).is_absolute()
    assert Path(command[0]).exists()


def test_the_resident_server_is_the_default_where_it_runs() -> None:
    import os

    assert RESIDENT_BY_DEFAULT is (os.name == "posix")


@pytest.mark.parametrize(
    ("resident", "serve"), [(True, ["serve", "--resident"]), (False, ["serve"])], ids=str
)
@pytest.mark.parametrize(
    ("host", "config"),
    [
        ("claude-code", ".mcp.json"),
        ("cursor", ".cursor/mcp.json"),
        ("codex", ".codex/config.toml"),
        ("vscode", ".vscode/mcp.json"),
    ],
)
def test_either_server_lifecycle_is_written_as_chosen_and_doctor_counts_it_current(
    tmp_path: Path, host: str, config: str, resident: bool, serve: list[str]
) -> None:
    command = telic_command()
    write_kit(tmp_path, plan_kit(host, tmp_path, command, resident=resident))
    text = (tmp_path / config).read_text()
    if config.endswith(".toml"):
        args = tomllib.loads(text)["mcp_servers"]["telic"]["args"]
    else:
        servers = json.loads(text)
        args = servers.get("mcpServers", servers.get("servers"))["telic"]["args"]
    assert args[-1 - len(serve) :] == [str(tmp_path), *serve]
    (check,) = check_kits(tmp_path, command)
    assert check.ok, check.detail
    assert not any(c.changed for c in plan_kit(host, tmp_path, command, resident=resident))


@pytest.mark.parametrize(
    ("flags", "server"),
    [([], "resident" if RESIDENT_BY_DEFAULT else "per-session"), (["--in-process"], "per-session")],
    ids=["default", "in-process"],
)
def test_init_says_which_server_lifecycle_it_configured(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], server: str
) -> None:
    from telic.cli import main

    assert main(["init", "codex", "--repository", str(tmp_path), *flags]) == 0
    said = capsys.readouterr().out.splitlines()[-1]
    assert said.startswith("server: serve --resident" if server == "resident" else "server: serve,")
    assert main(["init", "codex", "--repository", str(tmp_path), *flags, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["server"] == server


def test_the_kits_set_each_hosts_fail_closed_option_where_it_has_one(tmp_path: Path) -> None:
    from telic.resident._shim import HOOK_WAIT

    for host in ("claude-code", "cursor", "codex", "vscode"):
        init(tmp_path, host)
    claude = json.loads((tmp_path / ".claude/settings.json").read_text())["hooks"]
    (pre,) = claude["PreToolUse"][0]["hooks"]
    (post,) = claude["PostToolUse"][0]["hooks"]
    assert pre["onFailure"] == "block"  # a hook Claude Code kills or cannot start blocks
    assert "onFailure" not in post  # a PostToolUse hook blocks nothing
    cursor = json.loads((tmp_path / ".cursor/hooks.json").read_text())["hooks"]
    for event, entries in cursor.items():
        (entry,) = entries
        assert entry.get("failClosed", False) is (event != "afterMCPExecution"), event
        assert entry["timeout"] > 2 * HOOK_WAIT, event
    codex = json.loads((tmp_path / ".codex/hooks.json").read_text())["hooks"]
    vscode = json.loads((tmp_path / ".github/hooks/telic.json").read_text())["hooks"]
    for document in (claude, codex, vscode):
        for groups in document.values():
            for action in groups[0]["hooks"]:
                assert action["timeout"] > 2 * HOOK_WAIT  # the hook's own deny comes first
    # Codex and VS Code document no option that makes a failed hook block: none is invented.
    assert "onFailure" not in json.dumps(codex) + json.dumps(vscode)
