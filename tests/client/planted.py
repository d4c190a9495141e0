"""Planted credentials of every kind the detector claims (BRIEF.md), and a Claude Code transcript
that holds them where agents put them (issue 12, "Done means").

Every value is invented here, shaped like the real format (prefix, length, alphabet, and the
CRC32 check digits of GitHub and npm tokens), from a seeded generator: nothing is a real key.
:data:`PLANTED` maps each kind to the values a test must never find outside this machine (for
kinds that wrap a secret, such as ``url-password``, the secret part). The transcript puts each
one in user text, assistant text, tool-call arguments (``curl -H``, ``export``, ``doctl``) or
tool output (``cat .env``, ``env``, ``aws configure``, a PEM key, ``git remote -v``), the title
(a ``summary`` line), and :data:`GIT_REMOTE` is a remote URL with userinfo.

``python -m tests.client.planted`` rewrites ``tests/client/data/claude-code-planted/`` (a
test checks the committed file is what this module writes).
"""

from __future__ import annotations

import base64
import json
import random
import string
import uuid
from pathlib import Path
from typing import Any

from loomsync.core.document.ids import ThreadId
from tests.invented import checksummed

DATA = Path(__file__).parent / "data" / "claude-code-planted"
SESSION = "5e1f2a3b-4c5d-4e6f-8a7b-9c0d1e2f3a4b"
THREAD_ID = f"T-{SESSION}"
FIXTURE = DATA / f"{SESSION}.jsonl"

_rng = random.Random(20261201)
_ALNUM = string.ascii_letters + string.digits
_UPPER_DIGITS = string.ascii_uppercase + string.digits
_B64 = string.ascii_letters + string.digits + "+/"
_URLSAFE = string.ascii_letters + string.digits + "-_"
_HEX = "0123456789abcdef"


def _pick(alphabet: str, n: int) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


def _checked(prefix: str) -> str:
    """``prefix`` + 30 random base62 characters + 6 base62 digits of their CRC32 (the GitHub
    and npm token format)."""
    return checksummed(prefix, _pick(_ALNUM, 30))


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


AWS_ACCESS = "AKIA" + _pick(_UPPER_DIGITS, 16)
AWS_SECRET = _pick(_B64, 40)
GITHUB = _checked("ghp_")
GITHUB_TITLE = _checked("ghp_")
GITLAB = "glpat-" + _pick(_URLSAFE, 20)
SLACK_TOKEN = f"xoxb-{_pick(string.digits, 12)}-{_pick(string.digits, 13)}-{_pick(_ALNUM, 24)}"
SLACK_WEBHOOK_PATH = f"T{_pick(_UPPER_DIGITS, 8)}/B{_pick(_UPPER_DIGITS, 10)}/{_pick(_ALNUM, 24)}"
SLACK_WEBHOOK = f"https://hooks.slack.com/services/{SLACK_WEBHOOK_PATH}"
STRIPE = "sk_live_" + _pick(_ALNUM, 99)
OPENAI = "sk-" + _pick(_ALNUM, 20) + "T3BlbkFJ" + _pick(_ALNUM, 20)
ANTHROPIC = "sk-ant-api03-" + _pick(_URLSAFE, 93) + "AA"
GOOGLE = "AIza" + _pick(_URLSAFE, 35)
AZURE = base64.b64encode(_rng.randbytes(64)).decode()
TWILIO = "SK" + _pick(_HEX, 32)
SENDGRID = f"SG.{_pick(_URLSAFE, 22)}.{_pick(_URLSAFE, 43)}"
MAILCHIMP = _pick(_HEX, 32) + "-us14"
NPM = _checked("npm_")
PYPI = "pypi-AgEIcHlwaS5vcmc" + _pick(_URLSAFE, 120)
DISCORD = f"M{_pick(_ALNUM, 23)}.{_pick(_URLSAFE, 6)}.{_pick(_URLSAFE, 27)}"
TELEGRAM = f"{_pick(string.digits, 10)}:AA{_pick(_URLSAFE, 33)}"
SQUARE = "sq0atp-" + _pick(_URLSAFE, 22)
HUGGINGFACE = "hf_" + _pick(string.ascii_letters, 34)
DIGITALOCEAN = "dop_v1_" + _pick(_HEX, 64)
_JWT_HEAD = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
_JWT_BODY = _b64url(json.dumps({"sub": "demo-user-4821", "iat": 1764547200}).encode())
JWT = f"{_JWT_HEAD}.{_JWT_BODY}.{_b64url(_rng.randbytes(32))}"
_PEM_BODY = base64.encodebytes(_rng.randbytes(1190)).decode().strip()
PEM_LINE = _PEM_BODY.splitlines()[3]  # a body line: searched for as the planted value
PRIVATE_KEY = f"-----BEGIN RSA PRIVATE KEY-----\n{_PEM_BODY}\n-----END RSA PRIVATE KEY-----"
DB_PASSWORD_IN_URL = _pick(_ALNUM, 18)
REMOTE_PASSWORD = _pick(_ALNUM, 20)
GIT_REMOTE = f"https://deploy:{REMOTE_PASSWORD}@git.example.com/acme/payments.git"
BEARER = _pick(_ALNUM, 40)
BASIC = base64.b64encode(f"ci-bot:{_pick(_ALNUM, 16)}".encode()).decode()
COOKIE = _pick(_HEX, 40)
SET_COOKIE = _pick(_URLSAFE, 32)
ENV_SECRET = _pick(_ALNUM, 28)
DOTENV_PASSWORD = _pick(_ALNUM, 22)
YAML_SECRET = _pick(_ALNUM, 30)
MYSQL_PASSWORD = _pick(_ALNUM, 14)
SSHPASS = _pick(_ALNUM, 16)

#: kind -> the values that must never leave the machine.
PLANTED: dict[str, tuple[str, ...]] = {
    "aws-access-key": (AWS_ACCESS,),
    "aws-secret-key": (AWS_SECRET,),
    "github-token": (GITHUB, GITHUB_TITLE),
    "gitlab-token": (GITLAB,),
    "slack-token": (SLACK_TOKEN,),
    "slack-webhook": (SLACK_WEBHOOK_PATH,),
    "stripe-key": (STRIPE,),
    "openai-key": (OPENAI,),
    "anthropic-key": (ANTHROPIC,),
    "google-api-key": (GOOGLE,),
    "azure-storage-key": (AZURE,),
    "twilio-key": (TWILIO,),
    "sendgrid-key": (SENDGRID,),
    "mailchimp-key": (MAILCHIMP,),
    "npm-token": (NPM,),
    "pypi-token": (PYPI,),
    "discord-token": (DISCORD,),
    "telegram-bot-token": (TELEGRAM,),
    "square-token": (SQUARE,),
    "huggingface-token": (HUGGINGFACE,),
    "digitalocean-token": (DIGITALOCEAN,),
    "jwt": (JWT,),
    "private-key": (PEM_LINE,),
    "url-password": (DB_PASSWORD_IN_URL, REMOTE_PASSWORD),
    "authorization-header": (BEARER, BASIC),
    "cookie": (COOKIE, SET_COOKIE),
    "secret-assignment": (ENV_SECRET, DOTENV_PASSWORD, YAML_SECRET),
    "password": (MYSQL_PASSWORD, SSHPASS),
}

#: The kinds the placeholder rules of loomsync/core/secrets know (the rest fail until the detector
#: lands: that is expected on the client branch).
PLACEHOLDER_KINDS = frozenset({"aws-access-key", "github-token", "private-key"})

_TITLE = f"Rotate the leaked deploy token {GITHUB_TITLE} and fix the payments deploy"

_TURNS: list[tuple[str, Any]] = [
    (
        "user",
        "The payments deploy fails since Friday. For the record, the old keys were "
        f"{OPENAI} (OpenAI), {STRIPE} (Stripe live) and {HUGGINGFACE} for the model hub; "
        "please find out what is wrong and rotate whatever leaked.",
    ),
    (
        "assistant",
        f"I'll check the configuration first. The Slack bot token {SLACK_TOKEN} and the "
        f"Anthropic key {ANTHROPIC} appear in the CI settings, and the Discord bot uses "
        f"{DISCORD}. Square's sandbox token is {SQUARE}; Twilio's API key is {TWILIO}.",
    ),
    ("tool_use", {"command": "cat .env", "description": "Show the environment file"}),
    (
        "tool_result",
        f"DB_PASSWORD={DOTENV_PASSWORD}\n"
        f"DATABASE_URL=postgres://payments:{DB_PASSWORD_IN_URL}@db.internal:5432/payments\n"
        "LOG_LEVEL=info\n",
    ),
    ("tool_use", {"command": "env | sort", "description": "Environment of the deploy shell"}),
    (
        "tool_result",
        f"HOME=/home/deploy\nPATH=/usr/bin:/bin\nSESSION_SECRET={ENV_SECRET}\nSHELL=/bin/bash\n",
    ),
    ("tool_use", {"command": "aws configure list && cat ~/.aws/credentials"}),
    (
        "tool_result",
        "      Name                    Value             Type    Location\n"
        "      ----                    -----             ----    --------\n"
        f"   profile                <not set>             None    None\n"
        f"access_key     ****************{AWS_ACCESS[-4:]} shared-credentials-file\n"
        "[default]\n"
        f"aws_access_key_id = {AWS_ACCESS}\n"
        f"aws_secret_access_key = {AWS_SECRET}\n",
    ),
    (
        "tool_use",
        {
            "command": (
                f"curl -s -H 'Authorization: Bearer {BEARER}' -H 'Cookie: sessionid={COOKIE}' "
                "https://api.example.com/v1/deploys"
            )
        },
    ),
    (
        "tool_result",
        f"HTTP/1.1 401 Unauthorized\nSet-Cookie: __Host-session={SET_COOKIE}; Path=/; Secure\n\n"
        f'{{"error": "expired", "hint": "the token {JWT} expired"}}',
    ),
    (
        "tool_use",
        {"command": f"curl -u x -H 'Authorization: Basic {BASIC}' https://ci.example.com/api/jobs"},
    ),
    ("tool_result", '{"jobs": []}'),
    ("tool_use", {"command": "cat ~/.ssh/id_rsa_deploy"}),
    ("tool_result", PRIVATE_KEY + "\n"),
    ("tool_use", {"command": "git remote -v"}),
    (
        "tool_result",
        f"origin\t{GIT_REMOTE} (fetch)\norigin\t{GIT_REMOTE} (push)\n"
        f"mirror\thttps://gitlab.com/acme/payments.git (fetch)\n",
    ),
    (
        "tool_use",
        {
            "command": (
                f"mysql -u root -p{MYSQL_PASSWORD} payments -e 'select 1' && "
                f"sshpass -p '{SSHPASS}' ssh deploy@10.0.4.12 uptime"
            )
        },
    ),
    ("tool_result", "1\n 10:02:11 up 3 days,  2:11,  1 user,  load average: 0.08, 0.03, 0.01\n"),
    (
        "tool_use",
        {"command": f"doctl auth init --access-token {DIGITALOCEAN} && npm whoami"},
    ),
    ("tool_result", f"Validating token... OK\n//registry.npmjs.org/:_authToken={NPM}\n"),
    (
        "tool_use",
        {"command": f"curl -s https://api.telegram.org/bot{TELEGRAM}/getMe && cat ~/.pypirc"},
    ),
    ("tool_result", f'{{"ok": true}}\n[pypi]\n  username = __token__\n  password = {PYPI}\n'),
    (
        "tool_use",
        {"command": f'curl -X POST -d \'{{"text": "deploy failed"}}\' {SLACK_WEBHOOK}'},
    ),
    ("tool_result", "ok"),
    ("tool_use", {"command": "az storage account show-connection-string -n acmepayments"}),
    (
        "tool_result",
        json.dumps(
            {
                "connectionString": "DefaultEndpointsProtocol=https;AccountName=acmepayments;"
                f"AccountKey={AZURE};EndpointSuffix=core.windows.net"
            },
            indent=2,
        ),
    ),
    ("tool_use", {"command": "cat deploy/values.yaml"}),
    (
        "tool_result",
        f"mail:\n  provider: sendgrid\n  key: {SENDGRID}\nnewsletter: {MAILCHIMP}\n"
        f"maps: https://maps.googleapis.com/maps/api/geocode/json?key={GOOGLE}\n"
        f"oauth:\n  client_secret: {YAML_SECRET}\n",
    ),
    (
        "assistant",
        f"Found it: the GitLab token {GITLAB} in the mirror settings expired, and {GITHUB} "
        "is the deploy token that leaked. Rotate both; everything else is in the files above.",
    ),
]


def _lines() -> list[dict[str, Any]]:
    """The transcript's JSON lines, in Claude Code's shape (one record per line)."""
    common = {
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/dev/payments",
        "sessionId": SESSION,
        "version": "2.1.38",
        "gitBranch": "fix/deploy",
    }
    out: list[dict[str, Any]] = []
    parent: str | None = None
    pending_tool: str | None = None
    for number, (kind, value) in enumerate(_TURNS):
        uuid = f"00000000-0000-4000-8000-{number:012d}"
        stamp = f"2026-11-30T10:{number:02d}:00.000Z"
        record: dict[str, Any] = {**common, "parentUuid": parent, "uuid": uuid, "timestamp": stamp}
        if kind == "user":
            record.update(type="user", message={"role": "user", "content": value})
        elif kind == "assistant":
            content = [{"type": "text", "text": value}]
            message = {"model": "claude-opus-4-6", "id": f"msg_{number:04d}", "type": "message"}
            record.update(
                type="assistant", message={**message, "role": "assistant", "content": content}
            )
        elif kind == "tool_use":
            pending_tool = f"toolu_{number:04d}"
            block = {"type": "tool_use", "id": pending_tool, "name": "Bash", "input": value}
            message = {"model": "claude-opus-4-6", "id": f"msg_{number:04d}", "type": "message"}
            record.update(
                type="assistant", message={**message, "role": "assistant", "content": [block]}
            )
        else:
            block = {"tool_use_id": pending_tool, "type": "tool_result", "content": value}
            record.update(type="user", message={"role": "user", "content": [block]})
        out.append(record)
        parent = uuid
    out.insert(0, {"type": "summary", "summary": _TITLE, "leafUuid": parent})
    return out


def transcript() -> str:
    """The fixture's text: one JSON object a line."""
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in _lines())


def session_copy(folder: Path, owner: str) -> tuple[Path, str]:
    """The fixture written into ``folder`` under a fresh session id, and the id of its thread
    once ``owner`` (a token's ``sub``) imports it (issue 15, item 5: import ids are per owner)."""
    session = str(uuid.uuid4())
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{session}.jsonl"
    path.write_text(transcript().replace(SESSION, session), encoding="utf-8")
    return path, str(ThreadId.owned(owner, f"T-{session}"))


def every_value() -> list[tuple[str, str]]:
    """(kind, value) for every planted value."""
    return [(kind, value) for kind, values in PLANTED.items() for value in values]


if __name__ == "__main__":
    DATA.mkdir(parents=True, exist_ok=True)
    FIXTURE.write_text(transcript(), encoding="utf-8")
    print(f"wrote {FIXTURE}")  # noqa: T201
