"""A repository full of secrets: none of their paths or bytes reach anything grounding produces.

Secret-shaped strings are assembled at run time so that this repository never holds a string
that a secret scanner would flag. The grounding result is fed through the controller into a
ledger, and the wire form, the canonical manifest, the documents, the stored artifacts, the
trace and the error text of refused active paths are all scanned.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from telic._errors import ContextSecurityError
from telic.controller import Controller, StartRequest
from telic.grounding import ground_repository
from telic.ledger import open_ledger
from tests.telic.secret_corpus import corpus, git_credentials, npmrc

from .repos import everything, exclusions, make_repo

pytestmark = pytest.mark.anyio


def _marker(number: int) -> str:
    return f"LEAKMARK{number:02d}" + "Qx7" * 3


PEM = "-----BEGIN " + "RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA" + "Zm9v" * 8 + "\n"
AWS = "AKIA" + "Q3LEAKTESTKEY7XY"
GITHUB = "gh" + "p_" + "Lk9" * 12
JWT = "ey" + "JhbGciOiJIUzI1NiJ9." + "eyJsZWFrIjoieWVzIn0." + "bGVha3Rlc3RzaWduYXR1cmU"

SECRET_PATHS = [
    ".env",
    ".env.production",
    "config/.env.local",
    ".git-credentials",
    ".netrc",
    ".npmrc",
    ".pypirc",
    "credentials/aws-prod.txt",
    "deploy/secrets/db.yaml",
    "credentials.json",
    "secret.toml",
    "service-account-prod.json",
    "keys/id_rsa",
    "keys/id_ed25519.pub",
    "tls/server.key",
    "tls/cert.pem",
    "keystore.p12",
    "store.pfx",
]
SECRET_CONTENTS = {
    "src/keyfile_loader.py": f'KEY = """{PEM}"""\n',
    "src/aws_client.py": f"ACCESS = '{AWS}'\n",
    "scripts/ci_push.sh": f"export GH_TOKEN={GITHUB}\n",
    "src/session_cookie.txt": f"cookie {JWT}\n",
    "config/app_settings.ini": "[app]\napi_key = " + "k3y-Vq81mZp0\n",
    "config/db_settings.yaml": "db:\n  pass" + "word: hunter2-Wx91\n",
    "src/oauth_setup.py": "client_secret = '" + "cs-8Hh2Kk4L'\n",
    "docs/webhook_howto.md": "Call it with tok" + "en=tk-55Ab90Zz\n",
    "src/headers_util.py": "authoriz" + "ation=auth-Jm27Qp\n",
}
PUBLIC = {
    "README.md": "# Service\n",
    "src/app.py": "print('ok')\n",
    "docs/keys_overview.md": "How the service loads its configuration.\n",
}
REQUEST = (
    "Audit the env, credentials, secrets, keys, tls, keystore, store, service account, aws client,"
    " keyfile loader, ci push, session cookie, app settings, db settings, oauth setup, webhook"
    " howto, headers util, netrc, npmrc, pypirc and git credentials"
)


def _repository(tmp_path: Path) -> Path:
    files: dict[str, str | bytes] = {
        path: f"{_marker(number)}\nvalue=Sx{number}Yz{number}abcdef\n"
        for number, path in enumerate(SECRET_PATHS)
    }
    files |= {
        path: f"# {_marker(50 + number)}\n{content}"
        for number, (path, content) in enumerate(SECRET_CONTENTS.items())
    }
    return make_repo(tmp_path / "repo", {**files, **PUBLIC})


def _needles() -> list[str]:
    needles = [_marker(n) for n in range(len(SECRET_PATHS))]
    needles += [_marker(50 + n) for n in range(len(SECRET_CONTENTS))]
    needles += [PEM.splitlines()[1], AWS, GITHUB, JWT, "k3y-Vq81mZp0", "hunter2-Wx91"]
    needles += ["cs-8Hh2Kk4L", "tk-55Ab90Zz", "auth-Jm27Qp"]
    needles += SECRET_PATHS + list(SECRET_CONTENTS)
    needles += [".env", "id_rsa", "id_ed25519", "credentials", "server.key", "cert.pem"]
    return needles


def _leaks(text: str) -> list[str]:
    return [needle for needle in _needles() if needle in text]


async def test_no_secret_path_or_byte_reaches_the_manifest_documents_or_trace(
    tmp_path: Path,
) -> None:
    repo = _repository(tmp_path)
    assert len(SECRET_PATHS) + len(SECRET_CONTENTS) >= 15
    async with open_ledger("memory://") as ledger:
        controller = Controller(ledger)
        started = await controller.start_run(
            StartRequest(REQUEST, "analyze_only"), repository_root=str(repo)
        )
        run_id = started.run.run_id
        result = await ground_repository(
            run_id=run_id,
            original_request=REQUEST,
            repository_root=repo,
            mode="analyze_only",
            active_paths=["src/app.py", ".env", "keys/id_rsa"],
        )
        assert exclusions(result) == {
            "secret_like_file": len(SECRET_PATHS),
            "secret_content": len(SECRET_CONTENTS),
        }
        grounded = await controller.ground(
            run_id,
            started.next_action.id,
            started.run.version,
            result.manifest,
            result.documents,
        )
        assert grounded.next_action.phase == "agent_1_frame"
        trace = await controller.get_trace(run_id, limit=500)
        stored = [
            (await controller.get_artifact(run_id, record.artifact_id)).body
            for record in (await controller.get_run(run_id)).artifacts
            if record.type in {"ContextManifest", "ContextDocument"}
        ]
    assert sorted(doc.repository_ref for doc in result.documents) == [
        "repo://README.md",
        "repo://docs/keys_overview.md",
        "repo://src/app.py",
    ]
    assert _leaks(everything(result)) == []
    assert _leaks(json.dumps([event.to_wire() for event in trace.events])) == []
    assert _leaks(json.dumps(stored)) == []
    assert _leaks(" ".join(result.wire.warnings)) == []


@pytest.mark.parametrize(
    "active", ["../.env", "../../home/user/.netrc", "/etc/credentials/aws-prod.txt"]
)
async def test_refused_secret_like_active_paths_are_not_named(active: str, tmp_path: Path) -> None:
    repo = _repository(tmp_path)
    with pytest.raises(ContextSecurityError) as caught:
        await ground_repository(
            run_id="run-1",
            original_request=REQUEST,
            repository_root=repo,
            mode="analyze_only",
            active_paths=[active],
        )
    assert _leaks(str(caught.value)) == []
    assert _leaks(repr(caught.value.args)) == []


# ---------------------------------------------------------------- the 33-kind corpus

PLANTED = (*corpus(), npmrc(), git_credentials())


async def test_every_planted_kind_is_excluded_as_secret_content_and_only_counted(
    tmp_path: Path,
) -> None:
    files: dict[str, str | bytes] = {
        f"notes/sample_{number:02d}.txt": f"Settings for the service:\n{planted.text}\n"
        for number, planted in enumerate(PLANTED)
    }
    files["src/app.py"] = "print('ok')\n"
    repo = make_repo(tmp_path / "repo", files)
    result = await ground_repository(
        run_id="run-1",
        original_request="Audit the settings samples",
        repository_root=repo,
        mode="analyze_only",
        active_paths=["src/app.py", *files],
    )
    assert exclusions(result) == {"secret_content": len(PLANTED)}
    assert [doc.repository_ref for doc in result.documents] == ["repo://src/app.py"]
    text = everything(result)
    for planted in PLANTED:
        assert planted.secret not in text, planted.name
    assert "sample_" not in text  # excluded files are counted, never named


async def test_a_file_whose_path_holds_a_token_is_never_read_nor_named(tmp_path: Path) -> None:
    token = corpus()[9].secret  # a classic GitHub token as a file name
    repo = make_repo(
        tmp_path / "repo", {f"notes/{token}.txt": "harmless\n", "src/app.py": "print('ok')\n"}
    )
    result = await ground_repository(
        run_id="run-1",
        original_request="Look at the notes",
        repository_root=repo,
        mode="analyze_only",
        active_paths=["src/app.py", f"notes/{token}.txt"],
    )
    assert exclusions(result) == {"secret_like_file": 1}
    assert token not in everything(result)
