"""The detection rules: detect-secrets' token patterns plus loomsync's own for transcripts.

Each :class:`Rule` is an RE2 pattern (linear time, no look-around), the group whose span is
the secret, the characters that may not touch the span on either side (the boundaries
RE2 cannot express), and a check of the value. Token patterns come from detect-secrets'
plugin classes (their compiled ``denylist``, :func:`_from_detect_secrets`: the maintained rule
source, issue 12 item 2); loomsync adds broader token formats detect-secrets lacks (new
OpenAI and Anthropic keys, GitHub fine-grained tokens, Stripe test keys, …) and the context
rules agent transcripts need: ``NAME=value`` assignments, ``Authorization``/``Cookie``
headers, URL userinfo, PEM blocks, JWTs and command-line passwords.

Rules are listed by priority: when spans overlap, the findings are merged into one span of
the earliest rule's kind (engine.py), so ``GITHUB_TOKEN=ghp_…`` is a ``github-token``.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from dataclasses import dataclass

from loomsync.core.secrets.shapes import (
    is_code,
    is_literal_secret,
    is_placeholder,
    is_secret_name,
    is_secret_phrase,
    is_secret_value,
    is_token_like,
    strip_expression_chars,
)

ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
WORD = ALNUM | {"_"}
TOKEN = WORD | {"-"}
BASE64 = ALNUM | {"+", "/"}
DIGITS = frozenset("0123456789")


@dataclass(frozen=True, slots=True)
class Rule:
    """One pattern of one kind.

    ``group``: the group whose span is redacted (0: the whole match; a tuple of names: the
    first of them that took part in the match); ``before``/``after``:
    characters that may not precede/follow that span (word boundaries); ``check(value,
    match_text)``: False rejects the match (placeholders, names that are not secret's);
    ``trigger``: what the engine's set matches for this rule, a pattern every match of
    ``pattern`` contains (engine.py derives one when None; patterns that begin with a
    repetition give theirs here).
    """

    kind: str
    pattern: str
    group: int | tuple[str, ...] = 0
    before: frozenset[str] = frozenset()
    after: frozenset[str] = frozenset()
    check: Callable[[str, str], bool] | None = None
    trigger: str | None = None


def _token(value: str, _match: str) -> bool:
    """A token with a fixed prefix: placeholders like ``ghp_xxxx…`` have few distinct
    characters (adding characters around a token never makes it one)."""
    return len(set(value)) >= 8


def _aws_id(value: str, match: str) -> bool:
    return _token(value, match) and "EXAMPLE" not in value


def _jwt(value: str, _match: str) -> bool:
    head = value.split(".", 1)[0]
    try:
        decoded = base64.urlsafe_b64decode(head + "=" * (-len(head) % 4))
    except (binascii.Error, ValueError):
        return False
    return decoded.startswith(b"{") and (b'"alg"' in decoded or b'"typ"' in decoded)


def _pem(value: str, _match: str) -> bool:
    """A PEM block with a body: a run of 40+ base64 characters (not ``...``)."""
    run = 0
    for char in value:
        run = run + 1 if char in BASE64 else 0
        if run >= 40:
            return True
    return False


def _secret(value: str, _match: str) -> bool:
    return is_secret_value(value)


def _not_placeholder(value: str, _match: str) -> bool:
    return len(value) >= 3 and not is_placeholder(value) and not value.startswith("-")


def _named(value: str, match: str) -> bool:
    """``NAME=value``: the name (the match up to the separator) must be a secret's; a quoted
    value may be a phrase of a few words (``'Zq8p W2rT5v'``, review P5)."""
    if match.endswith("("):  # a function call: token = make_token(…) (the char after bare)
        return False
    if _verdict(value, match) or not is_secret_name(_name_of(value, match)):
        return False
    at = match.rfind(value)
    if at > 0 and match[at - 1] in "\"'":  # quoted: a literal, never code (newcomer item 1)
        return is_literal_secret(value)
    return is_secret_value(value)


#: A test runner's verdict (Go's ``--- PASS: TestX``, pytest's ``PASSED``): a status word,
#: never the name of a password; found over the real transcripts (a Crush session, issue 27).
_TEST_VERDICT = frozenset({"PASS", "PASSED"})


def _verdict(value: str, match: str) -> bool:
    """True when ``match`` is a test verdict line (``PASS: TestName``), not an assignment."""
    return _name_of(value, match) in _TEST_VERDICT and ":" in match[: match.rfind(value)]


def _name_of(value: str, match: str) -> str:
    """The name in a ``NAME<sep>value`` match: its last identifier before the value (colour
    codes of ``grep --color`` left out)."""
    names = _IDENTIFIERS.findall(_ANSI.sub("", match[: match.rfind(value)]))
    return names[-1].strip("-.") if names else ""


def _named_line(value: str, match: str) -> bool:
    """``NAME=value`` on a line of its own (.env, env output): any non-blank value that is
    not a placeholder, a path, a URL, a number, a call (``token=make_token()``) or code
    (``api_key=settings.API_KEY,``: a keyword argument, review P2-9)."""
    if _verdict(value, match) or not is_secret_name(_name_of(value, match)):
        return False
    bare = value.rstrip(",;")
    head = bare.partition("(")[0]  # f(…) is a call, Xk9m(Q2v) a password (newcomer item 1)
    if _CALL.fullmatch(value) and is_code(head):
        return False
    if (bare != value or any(c in bare for c in ".[") or is_code(head)) and is_code(bare):
        return False
    return is_secret_value(strip_expression_chars(value)) and not is_placeholder(value)


def _pair(value: str, match: str) -> bool:
    """``name: NAME`` then ``value: X`` (k8s/ECS env lists, ``<add key= value=>``): the name
    given before ``value`` must be a secret's (review P1-4)."""
    name = _PAIR_NAME.search(match)
    if name is None or not is_secret_name(name.group(1)):
        return False
    return is_secret_value(value) or is_secret_phrase(value)


def _tagged(value: str, match: str) -> bool:
    """``<password>X</password>``: the element's name must be a secret's."""
    return is_secret_name(match[1 : match.index(">")]) and is_secret_value(value)


def _token_userinfo(value: str, match: str) -> bool:
    return is_token_like(value, match.rpartition("@")[2])


_IDENTIFIERS = re.compile(r"[A-Za-z0-9_.\-]+")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_PAIR_NAME = re.compile(r"(?i:name|key)[\"']?[ \t]*[:=][ \t]*[\"']?([A-Za-z0-9_.\-]+)")
_CALL = re.compile(r"[\w.]+\(.*\)[;,]?")


def _header(value: str, _match: str) -> bool:
    return len(value) >= 8 and not is_placeholder(value)


def _cookie(value: str, _match: str) -> bool:
    if is_placeholder(value):
        return False
    pairs = [p.split("=", 1) for p in value.split(";") if "=" in p]
    return any(len(v.strip()) >= 6 and not is_placeholder(v.strip()) for _, v in pairs)


# Shared pieces of the context patterns (RE2 syntax). A quoted value's closing quote is
# optional: output cut off mid-line still hides the value.
_Q = r"""(?:\\?["'])?"""  # an optional quote, maybe JSON-escaped
_ANSI_RE2 = r"(?:\x1b\[[0-9;]*m)*"  # grep --color around a name
_NAME_END = _Q + r"\]?" + _ANSI_RE2  # config["NAME"] = …
_ARG = r"""(?:\\?["'])?([^\s"'\\]+)"""  # a command-line argument, maybe quoted
_SEP = r"""[ \t]*(?::=|=>|=|:)[ \t]*"""
_UNQUOTED = r"""[^\s"'`,;)(\]\[{}<>\\]+"""
# an unquoted value stops at the next ``&name=`` of a query string or form body (newcomer 2)
_QUERY_END = r"""(?:&[^\s"'&=]*=|[\s"'`,;)(\]\[{}<>\\]|$)"""
_BARE = r"""[^\s"'`,;)(\]\[{}<>\\&]+(?:&[^\s"'`,;)(\]\[{}<>\\&=]*)*"""
_VALUE = (
    r"""(?:\\?"(?P<dq>[^"\\\n]*)(?:\\?")?|'(?P<sq>[^'\n]*)'|(?P<bare>"""
    + _BARE
    + r")"
    + _QUERY_END
    + ")"
)
_NAME_WORD = r"(?i:secret|token|passw(?:or)?d|pwd|pass|phrase|key|credentials?|auth)"

# Triggers of patterns that begin with a repetition (each a substring of every match).
_DISCORD = r"[A-Za-z0-9_\-]{4}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{4}"
_TELEGRAM = r"[0-9]{4}:[0-9A-Za-z_\-]{4}"
_MAILCHIMP = r"[0-9a-z]{4}-us[0-9]"
_DETECT_SECRETS_TRIGGERS = {"discord-token": _DISCORD, "telegram-bot-token": _TELEGRAM,
                            "mailchimp-key": _MAILCHIMP}  # fmt: skip

#: What names an Azure storage account key before its value: ``AccountKey=`` of a connection
#: string, ``--account-key``, ``AZURE_STORAGE_KEY``, ``storageAccountKey``, the ``keyName`` of
#: ``az storage account keys list``, ``SharedKey account:`` of an Authorization header.
_AZURE_CONTEXT = (
    r"(?i:account[_\-. ]?key|storage[_\-.]?(?:account[_\-.]?)?(?:access[_\-.]?)?key|"
    r"azure[A-Za-z0-9_\-.]{0,40}key|keyname|sharedkey(?:lite)?[ \t]+[a-z0-9]+:|"
    r"(?:primary|secondary)[_\-]?(?:access[_\-]?)?key)"
)

# Own rules, by priority (token formats first, then context rules).
_OWN_TOKENS: tuple[Rule, ...] = (
    Rule("anthropic-key", r"sk-ant-[A-Za-z0-9_\-]{20,}", before=TOKEN, check=_token),
    Rule("openai-key", r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_\-]{20,}",
         before=TOKEN, check=_token),
    Rule("openai-key", r"sk-[A-Za-z0-9]{32,}", before=TOKEN, check=_token),
    Rule("github-token", r"gh[pousr]_[A-Za-z0-9_]{36,251}", before=TOKEN, after=WORD,
         check=_token),
    Rule("github-token", r"github_pat_[A-Za-z0-9_]{22,255}", before=TOKEN, after=WORD,
         check=_token),
    Rule("slack-token", r"xox[abposre]-[0-9A-Za-z\-]{10,}", before=TOKEN, check=_token),
    Rule("slack-token", r"xapp-[0-9]-[A-Za-z0-9\-]{10,}", before=TOKEN, check=_token),
    Rule("slack-webhook", r"https://hooks\.slack\.com/(?:services|workflows|triggers)/"
         r"[A-Za-z0-9_/]{20,}", check=_token),
    Rule("stripe-key", r"[rs]k_(?:live|test)_[0-9a-zA-Z]{16,247}", before=TOKEN, after=ALNUM,
         check=_token),
    Rule("stripe-key", r"whsec_[A-Za-z0-9]{24,}", before=TOKEN, check=_token),
    Rule("google-api-key", r"AIza[0-9A-Za-z_\-]{35}", before=TOKEN, after=TOKEN, check=_token),
    Rule("google-api-key", r"GOCSPX-[A-Za-z0-9_\-]{28}", before=TOKEN, after=TOKEN,
         check=_token),
    # 86 base64 characters and == is also every SHA-512 digest, Ed25519 signature and Rails
    # CSRF token (issue 27 item 2): only after a storage key's name, within a few lines
    Rule("azure-storage-key", _AZURE_CONTEXT + r"(?s:.){0,160}?([A-Za-z0-9+/]{86}==)", group=1,
         before=BASE64 | TOKEN, check=_token, trigger=_AZURE_CONTEXT),
    # GitLab's routable tokens end in .<2 base36>.<base36> (newcomer item 4)
    Rule("gitlab-token", r"glpat-[0-9A-Za-z_\-]{20,}(?:\.[0-9a-z]{2}\.[0-9a-z]{5,12})?",
         before=TOKEN, check=_token),
    Rule("npm-token", r"npm_[A-Za-z0-9]{36}", before=TOKEN, after=ALNUM, check=_token),
    Rule("npm-token", r":_authToken=[ \t]*(" + _UNQUOTED + ")", group=1, check=_not_placeholder),
    Rule("pypi-token", r"pypi-AgE[A-Za-z0-9_\-]{50,}", before=TOKEN, check=_token),
    Rule("discord-token", r"[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6,7}\."
         r"[A-Za-z0-9_\-]{27,40}", before=TOKEN, after=TOKEN, check=_token, trigger=_DISCORD),
    Rule("discord-token", r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/"
         r"[0-9]+/[A-Za-z0-9_\-]{30,}", check=_token),
    Rule("telegram-bot-token", r"[0-9]{8,10}:[0-9A-Za-z_\-]{35}", before=DIGITS, after=TOKEN,
         check=_token, trigger=_TELEGRAM),
    Rule("square-token", r"sq0atp-[0-9A-Za-z_\-]{22}", before=TOKEN, after=TOKEN, check=_token),
    # HashiCorp Vault service, batch and recovery tokens (no kind of their own: review P1-3)
    Rule("secret-assignment", r"hv[sbr]\.[A-Za-z0-9_\-]{24,}", before=TOKEN | {"."},
         check=_token),
    Rule("square-token", r"EAAA[A-Za-z0-9_\-]{60}", before=ALNUM, after=TOKEN, check=_token),
    Rule("huggingface-token", r"(?:hf|api_org)_[A-Za-z0-9]{30,40}", before=TOKEN, after=ALNUM,
         check=_token),
    Rule("digitalocean-token", r"do[por]_v1_[a-f0-9]{64}", before=TOKEN, after=ALNUM,
         check=_token),
    Rule("twilio-key", r"(?:AC|SK)[0-9a-f]{32}", before=ALNUM, after=ALNUM, check=_token),
    Rule("mailchimp-key", r"[0-9a-f]{32}-us[0-9]{1,2}", before=ALNUM, after=ALNUM,
         check=_token, trigger=_MAILCHIMP),
)  # fmt: skip

_OWN_CONTEXT: tuple[Rule, ...] = (
    # a block cut off before its END line ends at a blank line or the first line that is not
    # base64 or a header (newcomer item 3: the word after it stays)
    Rule("private-key",
         r"(?P<pem>-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?s:.)*?-----END[A-Z0-9 ]*"
         r"PRIVATE KEY(?: BLOCK)?-----)|(?P<cut>-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
         r"(?:(?:\r?\n|\\[nr])[A-Za-z0-9+/=:,\- \t]+)*)(?:[\r\n\"'\\]|$)",
         group=("pem", "cut"), check=_pem, trigger=r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY"),
    Rule("private-key", r"PuTTY-User-Key-File-[0-9]:(?s:.)*?Private-MAC:[ \t]*[0-9a-f]+",
         check=_pem),
    Rule("jwt", r"eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*"
         r"(?:\.[A-Za-z0-9_\-]*){0,2}", check=_jwt),
    Rule("aws-secret-key",
         r"(?i:aws_?secret_?(?:access_?)?key|secret_?access_?key)" + _Q
         + r"(?:" + _SEP + r"|[ \t]+)" + _Q + r"([A-Za-z0-9/+]{40})", group=1, after=BASE64,
         check=_aws_id),
    Rule("password", r"(?:^|[\s\"'])--?(?:(?:http|ftp|proxy|db|admin|user|root|auth)-)?"
         r"(?:password|passwd|pass|pwd)(?:=|[ \t]+)[\"']?([^\s\"']+)", group=1,
         check=_not_placeholder),
    # --token X, --api-key X, --auth-token X (review P5): a value that looks like a credential
    Rule("password", r"(?:^|[\s\"'])--(?:(?:api|auth|access|bearer|bot|personal)-)?"
         r"(?:token|key)(?:=|[ \t]+)[\"']?([^\s\"']+)", group=1, check=_secret),
    Rule("password", r"\bopenssl\b[^\n|;&]*?[ \t]-k[ \t]+" + _ARG, group=1,
         check=_not_placeholder),
    Rule("password", r"\bvault[ \t]+login[ \t]+(?:-[A-Za-z\-]+(?:=\S*)?[ \t]+)*"
         r"([^\s\-=][^\s=]*)(?:[ \t]|$)", group=1, check=_secret),
    Rule("password", r"\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)\b[^\n|;&]*?"
         r"[ \t]-p(?:\\?[\"'])?([^\s\"'\\\-][^\s\"'\\]*)", group=1, check=_not_placeholder),
    Rule("password", r"[ \t]-pass(?:in|out)?[ \t]+[\"']?pass:([^\s\"']+)", group=1,
         check=_not_placeholder),
    Rule("password", r"\bsshpass[ \t]+-p[ \t]*[\"']?([^\s\"']+)", group=1,
         check=_not_placeholder),
    Rule("password", r"\b(?:redis-cli\b[^\n|;&]*?[ \t]-a|docker[ \t]+login\b[^\n|;&]*?"
         r"[ \t]-p)[ \t]+[\"']?([^\s\"']+)", group=1, check=_not_placeholder),
    Rule("password", r"\bcurl\b[^\n|;&]*?[ \t](?:-u|--user)[ \t]+[\"']?[^\s:\"']+:"
         r"([^\s\"']+)", group=1, check=_not_placeholder),
    Rule("password", r"\b(?:sqlcmd|bcp|zip|mongo|mongosh|mongodump|mongorestore)\b[^\n|;&]*?"
         r"[ \t]-[Pp][ \t]+" + _ARG, group=1, check=_not_placeholder),
    Rule("password", r"\b7za?\b[^\n|;&]*?[ \t]-p([^\s\"'\\]+)", group=1,
         check=_not_placeholder),
    Rule("password", r"[ \t]-(?:src|dest)?(?:store|key)pass[ \t]+" + _ARG, group=1,
         check=_not_placeholder),
    Rule("password", r"\bldap[a-z]*\b[^\n|;&]*?[ \t]-w[ \t]+" + _ARG, group=1,
         check=_not_placeholder),
    Rule("password", r"\bsmbclient\b[^\n|;&]*?[ \t]-U[ \t]+[\"']?[^\s%\"']+%([^\s\"']+)",
         group=1, check=_not_placeholder),
    # htpasswd -b [-c] FILE USER PASSWORD
    Rule("password", r"\bhtpasswd[ \t]+(?:-[A-Za-z]+[ \t]+)*?-[A-Za-z]*b[A-Za-z]*[ \t]+"
         r"(?:-[A-Za-z]+[ \t]+)*[^\s\-]\S*[ \t]+\S+[ \t]+" + _ARG, group=1,
         check=_not_placeholder),
    # ~/.netrc: machine HOST [login USER] password PASSWORD
    Rule("secret-assignment", r"\bmachine[ \t]+\S+(?:\s+(?:login|account)[ \t]+\S+)*\s+"
         r"password[ \t]+(\S+)", group=1, check=_not_placeholder),
    # the password runs to the last @ of the authority (a raw @ in it: review P1-2); the user
    # part holds no [ ] (a marker is never a user: review P2-8)
    Rule("url-password", r"[A-Za-z][A-Za-z0-9+.\-]{1,30}://[^\s:/?#\"'<>\\\[\]]*:"
         r"([^\s/?#\"'<>\\]+)@[A-Za-z0-9\[._\-\p{L}]", group=1, check=_not_placeholder,
         trigger=r"://[^\s:/?#\"'<>\\\[\]]*:[^\s/?#\"'<>\\]+@"),
    # a token as the whole userinfo: https://<40 hex>@github.com (review P5)
    Rule("url-password", r"[A-Za-z][A-Za-z0-9+.\-]{1,30}://([A-Za-z0-9_\-]{20,}):?@"
         r"[A-Za-z0-9\[._\-]+", group=1, check=_token_userinfo,
         trigger=r"://[A-Za-z0-9_\-]{20}[A-Za-z0-9_\-]*:?@"),
    # query-string credentials: ?key=, &appid=, &sig= (Azure SAS), ?access_token= (review P5)
    Rule("secret-assignment", r"[?&](?i:sig|signature|key|api_?key|apikey|app_?id|app_?key|"
         r"access_?token|auth_?token|token|client_?secret|secret|password|x-amz-signature|"
         r"x-amz-security-token)=([A-Za-z0-9_\-.~+%/]{16,})", group=1, check=_secret),
    Rule("authorization-header",
         r"(?i:authorization)" + _Q + r"[ \t]*[:=][ \t]*" + _Q
         + r"(?:(?i:bearer|basic|token|bot|apikey|api-key|sso-key)[ \t]+)?"
         r"((?i:digest|aws4-hmac-sha256|negotiate|ntlm)[ \t][^\"'\n\r\\]+|[^\s\"'\\,;]+)",
         group=1, check=_header),
    Rule("authorization-header", r"\b(?:Bearer|bearer)[ \t]+([A-Za-z0-9._~+/=\-]{16,})",
         group=1, check=_secret),
    # HAR files and other name/value header lists: {"name": "Cookie", "value": "…"}
    Rule("authorization-header", r"\"name\"[ \t]*:[ \t]*\"(?i:authorization)\"[ \t]*,[ \t]*"
         r"\"value\"[ \t]*:[ \t]*\"(?:(?i:bearer|basic|token)[ \t]+)?([^\"\\]+)",
         group=1, check=_header),
    Rule("cookie", r"\"name\"[ \t]*:[ \t]*\"(?i:set-cookie|cookie)\"[ \t]*,[ \t]*"
         r"\"value\"[ \t]*:[ \t]*\"([^\"\\]+)", group=1, check=_cookie),
    # an OAuth access token: after the header rules, so a header names the header's kind
    Rule("google-api-key", r"ya29\.[0-9A-Za-z_\-]{20,}", check=_token),
    Rule("cookie", r"(?i:set-cookie|cookie)" + _Q + r"[ \t]*:[ \t]*" + _Q
         + r"([^\"'\n\r\\]+)", group=1, check=_cookie),
    Rule("cookie", r"(?:^|[ \t])(?:-b|--cookie)[ \t]+[\"']?([^\"'\s]+)", group=1,
         check=_cookie),
    Rule("secret-assignment",
         r"[A-Za-z0-9_.\-]*" + _NAME_WORD + r"[A-Za-z0-9_.\-]*" + _NAME_END + _SEP + _VALUE,
         group=("dq", "sq", "bare"), check=_named),
    # .env files and env output: the value runs to the end of the line's word, parentheses too
    Rule("secret-assignment",
         r"(?m)^[ \t]*" + _ANSI_RE2 + r"(?:export[ \t]+)?[A-Za-z0-9_.\-]*" + _NAME_WORD
         + r"[A-Za-z0-9_.\-]*" + _ANSI_RE2 + r"(?:=|:[ \t]+)([^\s\"'&][^\s&]*"
         r"(?:&(?:[^\s&=]*[^\s&\w.\-=\[\]][^\s&]*|[^\s&=]*))*)(?:&[^\s&=]*=|\s|$)", group=1,
         check=_named_line),
    # k8s/ECS env lists and <add key="…" value="…"/>: the name, then its value within two lines
    Rule("secret-assignment",
         r"(?i:\bname|\bkey)" + _Q + r"[ \t]*[:=][ \t]*" + _Q + r"[A-Za-z0-9_.\-]*" + _NAME_WORD
         + r"[A-Za-z0-9_.\-]*" + _Q + r"[ \t]*,?(?:[ \t]*\r?\n[^\n]*?){0,2}?[ \t]*" + _Q
         + r"(?i:value)" + _Q + r"[ \t]*[:=][ \t]*" + _VALUE, group=("dq", "sq", "bare"),
         check=_pair),
    # XML elements: <password>X</password> (review P5)
    Rule("secret-assignment", r"<[A-Za-z0-9_.:\-]*" + _NAME_WORD + r"[A-Za-z0-9_.:\-]*>"
         r"([^<\s]+)</", group=1, check=_tagged),
    # a hard-coded fallback: os.getenv('DB_PASSWORD', 'X'), ENV.fetch("TOKEN", "X")
    Rule("secret-assignment", r"(?:getenv|environ\.get|ENV\.fetch|env)\([ \t]*[\"'][A-Za-z0-9_.\-]*"
         + _NAME_WORD + r"[A-Za-z0-9_.\-]*[\"'][ \t]*,[ \t]*[\"']([^\"'\n]+)[\"']", group=1,
         check=_secret),
    # csh: setenv NAME value
    Rule("secret-assignment", r"(?m)^[ \t]*setenv[ \t]+[A-Za-z0-9_]*" + _NAME_WORD
         + r"[A-Za-z0-9_]*[ \t]+" + _VALUE, group=("dq", "sq", "bare"), check=_named),
    # a markdown table row: | NAME | value |
    Rule("secret-assignment",
         r"\|[ \t]*[A-Za-z0-9_.\-]*" + _NAME_WORD + r"[A-Za-z0-9_.\-]*[ \t]*\|[ \t]*`?"
         r"([^\s|`]+)`?[ \t]*\|", group=1, check=_named),
)  # fmt: skip


_OVER_RE2_LIMIT = re.compile(r"\{(\d+),\d{4,}\}")


def _from_detect_secrets() -> tuple[Rule, ...]:
    """The token patterns of detect-secrets' plugins, as RE2 rules of our kinds.

    A trailing ``(?!\\w)`` (which RE2 lacks) becomes an ``after`` boundary and a repetition
    bound over RE2's limit of 1,000 is left open (``{50,1024}`` → ``{50,}``); a plugin pattern
    that RE2 cannot compile raises ``re2.error`` at start-up, so an upgrade that changes a
    pattern is noticed by the tests, never silently dropped.
    """
    from detect_secrets.plugins import (
        aws,
        discord,
        github_token,
        gitlab_token,
        jwt,  # noqa: F401  (loomsync's own JWT rule validates the header)
        mailchimp,
        openai,
        pypi_token,
        sendgrid,
        slack,
        square_oauth,
        stripe,
        telegram_token,
        twilio,
    )

    plugins = (  # (kind, plugin, how many of its patterns, bounded: no letter/digit around)
        ("aws-access-key", aws.AWSKeyDetector, 1, False),
        ("github-token", github_token.GitHubTokenDetector, None, False),
        ("gitlab-token", gitlab_token.GitLabTokenDetector, None, False),
        ("slack-token", slack.SlackDetector, 1, False),
        ("stripe-key", stripe.StripeDetector, None, False),
        ("openai-key", openai.OpenAIDetector, None, False),
        ("sendgrid-key", sendgrid.SendGridDetector, None, False),
        ("mailchimp-key", mailchimp.MailchimpDetector, None, True),
        ("pypi-token", pypi_token.PypiTokenDetector, None, False),
        ("discord-token", discord.DiscordBotTokenDetector, None, True),
        ("telegram-bot-token", telegram_token.TelegramBotTokenDetector, None, True),
        ("square-token", square_oauth.SquareOAuthDetector, None, False),
        ("twilio-key", twilio.TwilioKeyDetector, None, True),
    )
    rules: list[Rule] = []
    for kind, plugin, first_only, bounded in plugins:
        patterns = list(plugin.denylist)[:first_only] if first_only else list(plugin.denylist)
        for compiled in patterns:
            pattern = compiled.pattern.removesuffix(r"(?!\w)")
            pattern = _OVER_RE2_LIMIT.sub(r"{\1,}", pattern)
            check = _aws_id if kind == "aws-access-key" else _token
            trigger = _DETECT_SECRETS_TRIGGERS.get(kind)
            edge = ALNUM if bounded else frozenset()
            # a Telegram token follows "bot" in its API's URLs (/bot123456789:AA…/getMe); a
            # prefixed token glued to a longer token is a piece of random text, not a token
            before = DIGITS if kind == "telegram-bot-token" else edge or TOKEN
            rules.append(
                Rule(kind, pattern, before=before, after=edge, check=check, trigger=trigger)
            )
    slack_webhook = slack.SlackDetector.denylist[1].pattern
    rules.append(Rule("slack-webhook", slack_webhook, check=_token))
    return tuple(rules)


def all_rules() -> tuple[Rule, ...]:
    """Every rule, by priority: loomsync's token formats, detect-secrets' token patterns,
    then the context rules (private keys, JWTs, passwords, headers, assignments)."""
    return _OWN_TOKENS + _from_detect_secrets() + _OWN_CONTEXT
