"""What a secret's name and value look like: the judgements the context rules share.

- :func:`is_placeholder`: values that stand for a secret without being one (``${VAR}``,
  ``$VAR``, ``<your-token>``, ``xxxx``, ``***``, ``os.environ[...]``, ``process.env.X``,
  ``changeme``, markers already written by this detector, …).
- :func:`is_secret_name`: names that say secret/token/password/key/credential/auth as the
  last word of the name (``DB_PASSWORD``, ``apiKey``, ``SECRET_KEY_BASE``), and not counters
  or settings about tokens (``max_tokens``, ``token_count``, ``tokenizer``, ``primary_key``).
- :func:`is_secret_value`: values that can be a credential: no whitespace, at least
  :data:`MIN_VALUE` characters, not a placeholder, a path, a URL, a number, a boolean, an
  expression or a plain word (issue 12 item 2; measured on the real transcripts, see
  docs/client.md "Redaction: how detection works").
"""

from __future__ import annotations

import functools
import re

#: Shortest value a name-based rule redacts (``hunter2`` is 7).
MIN_VALUE = 6

_MARKER = "[REDACTED:"

_PLACEHOLDER_WORDS = frozenset(
    {
        "changeme", "change_me", "change-me", "password", "passwd", "secret", "token",
        "example", "placeholder", "redacted", "dummy", "sample", "none", "null", "nil",
        "undefined", "true", "false", "yes", "no", "on", "off", "required", "optional",
        "enabled", "disabled", "bearer", "basic", "string", "str", "env", "hidden", "masked",
        "removed", "omitted", "notset", "not-set", "unset", "empty", "todo", "tbd", "test",
        # auth methods ("auth": "oauth2"; review P5)
        "oauth", "oauth1", "oauth2", "oidc", "saml", "saml2", "ldap", "kerberos", "ntlm",
        "digest", "hmac", "mtls", "apikey", "api-key", "api_key", "jwt", "sso",
    }
)  # fmt: skip

_PLACEHOLDER_RE = re.compile(
    r"""
    ^\$                                  # $VAR, ${VAR}, $(cmd), ${{ secrets.X }}
    | \$\{ | \{\{ | \}\} | %\( | %s\b    # templates
    | <[^<>]*> | ^\[.*\]$ | ^\{.*\}$     # <your-token>, [token], {token}
    | x{4,} | X{4,} | \*{3,} | \.{3,} | … | _{4,} | -{4,} | \#{4,}
    | os\.environ | getenv | process\.env | ENV\[ | env\( | secrets\.
    | ^![A-Za-z]                         # a YAML tag: !vault path, !ENV ${X}, !Ref Name
    | (?i:^your[-_ ]|^my[-_]|_here$|-here$|example|placeholder|redacted|changeme|dummy)
    """,
    re.VERBOSE,
)


def is_placeholder(value: str) -> bool:
    """Whether ``value`` stands for a secret without being one (see the module docstring);
    an empty value, a value of one repeated character and this detector's markers count."""
    if not value or _MARKER in value or len(set(value)) <= 2:
        return True
    if value.strip("\"'`").lower() in _PLACEHOLDER_WORDS:
        return True
    return _PLACEHOLDER_RE.search(value) is not None


_WORDS_RE = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")

_SECRET_ENDINGS = ("password", "passwd", "pwd", "token", "secret", "apikey", "passphrase",
                   "credential", "credentials", "auth", "secretkey", "privatekey", "accesskey",
                   "authtoken")  # fmt: skip
#: Words after the secret word that keep the name a secret's (``SECRET_KEY_BASE``).
_CONTINUATIONS = frozenset(
    {"base", "value", "b64", "base64", "raw", "plain", "plaintext", "enc", "encoded", "live",
     "test", "prod", "dev", "staging", "local", "old", "new", "override", "data", "str", "hex"}
)  # fmt: skip
#: Words before ``token`` that make it a count, a cursor or a model's special token.
_NOT_BEFORE_TOKEN = frozenset(
    {"next", "page", "continuation", "pagination", "cursor", "sync", "start", "end", "stop",
     "bos", "eos", "pad", "unk", "sep", "cls", "mask", "special", "max", "min", "num", "input",
     "output", "prompt", "completion", "total", "reasoning", "cached", "cache", "first",
     "last", "count", "csrf", "xsrf", "cancellation", "cancel", "resume",
     # anti-forgery tokens: public in the page (Rails, ASP.NET; issue 27 item 2)
     "authenticity", "verification", "forgery", "antiforgery"}
)  # fmt: skip
#: Words before ``key`` that make it a data-structure or database key, not a credential.
_NOT_BEFORE_KEY = frozenset(
    {"primary", "foreign", "sort", "partition", "cache", "public", "pub", "idempotency",
     "unique", "composite", "row", "object", "lookup", "group", "index", "range", "hash",
     "routing", "dedup", "dedupe", "map", "dict", "json", "config", "registry", "i18n",
     "translation", "message", "cursor", "gpg", "pgp", "list", "item", "query", "field",
     "column", "table", "natural", "surrogate", "shard", "bucket", "s3", "file", "path",
     "name", "host", "env", "the", "a", "by", "to", "of", "react", "sorting", "order",
     "state", "kms", "ssh", "node", "parent", "child", "cert", "entry",
     "setting", "settings", "option", "options", "metadata", "label", "tag", "attr", "prop",
     "storage", "token"}
)  # fmt: skip


@functools.lru_cache(maxsize=4096)
def is_secret_name(name: str) -> bool:
    """Whether a variable, field or header name says its value is a credential.

    The name is split into words (``_``, ``-``, ``.``, camelCase); the secret word
    (``password``, ``token``, ``secret``, ``apikey``, ``auth``, …, or ``key`` after a
    qualifying word, ``pass`` alone) must be the last word, or be followed only by words of
    ``_CONTINUATIONS``.
    """
    words: list[str] = [w.lower() for w in _WORDS_RE.findall(name)]
    while len(words) > 1 and (words[-1] in _CONTINUATIONS or words[-1].isdigit()):
        words.pop()
    if not words:
        return False
    last = words[-1]
    before = words[-2] if len(words) > 1 else ""
    if last == "key":
        return bool(before) and before not in _NOT_BEFORE_KEY
    if last == "pass":
        return True
    if last.endswith("token") and (last != "token" or before not in _NOT_BEFORE_TOKEN):
        return True
    return last.endswith(_SECRET_ENDINGS) and last != "token"


_NOT_VALUE_RE = re.compile(
    r"""
    ^(?:/|~/|\./|\.\./|[A-Za-z]:\\|arn:|[A-Za-z][A-Za-z0-9+.\-]*://)   # paths, ARNs, URLs
    | ^[-+]?\d+(?:\.\d+)?$                                 # numbers
    | ^\d+(?:[/:]\d+)+$                                    # 127/130, 12:30:05
    | \.(?:json|pem|key|crt|cer|txt|ya?ml|env|toml|ini|p12|pfx|der|pub|cfg|conf|py|js|ts)$
    | ^[\w\-]+(?:/[\w.\-]+)+\.[a-z]{2,4}$                   # reports/q1/x.pdf (newcomer 4)
    | [\s()\[\]{}<>`]                                       # whitespace, expressions
    | ^=
    """,
    re.VERBOSE,
)
_IDENTIFIER_RE = re.compile(r"[A-Za-z_][A-Za-z_.\-]*")
#: One segment of a dotted name that reads as an identifier: words of letters, each maybe
#: ending in digits, joined by ``_`` (``OPENAI_API_KEY``, ``url_encode64``, ``oauth2_scheme``);
#: ``Zq8p``, ``W2rT5v`` and ``CAESIAb3dE5f`` are not (review P1-3: values with dots).
_SEGMENT = r"[$_]*[A-Za-z$]+[0-9]*(?:_+[A-Za-z$]*[0-9]*)*"
_SEGMENT_RE = re.compile(_SEGMENT)
#: ``a.b``, ``self.token``, ``provider?.requiresAuth``, ``form.password.data``: code.
_ATTRIBUTE_RE = re.compile(rf"{_SEGMENT}(?:\??\.{_SEGMENT})+")
#: Code after ``NAME=`` (review P2-9): an identifier, attribute chain or subscript, or a call.
_CODE_RE = re.compile(rf"{_SEGMENT}(?:\??\.{_SEGMENT}|\[[^\]]*\])*!?|[A-Za-z_$][\w.$]*\(.*")
#: Lowercase slugs with a version or a number: ``app-settings-v2``, ``ingress-tls-2024``,
#: ``user:42:profile``, ``oauth2-proxy``: names of things, not credentials (review P5).
#: ``linux-x64-release``, ``arm64-debug``: platform words (newcomer item 4).
_SLUG_RE = re.compile(
    r"[a-z]{2,}[0-9]{0,2}(?:[-_:](?:[a-z]{2,}[0-9]{0,2}|[a-z][0-9]{2}|v[0-9]+|[0-9]{2,})){1,4}"
)


def is_code(value: str) -> bool:
    """Whether ``value`` (a trailing ``,`` or ``;`` ignored) is code rather than a value: an
    identifier, ``a.b.c``, ``x['k']``, ``f(…)`` (review P2-9: keyword arguments)."""
    return _CODE_RE.fullmatch(value.rstrip(",;")) is not None


def is_secret_value(value: str) -> bool:
    """Whether ``value`` (unquoted) can be a credential: at least :data:`MIN_VALUE`
    characters, no whitespace, not a placeholder, path, URL, ARN, number or expression, and
    not a plain word, identifier or slug (it needs a digit, mixed case or a symbol, or 20+
    characters). Not an entropy test."""
    if len(value) < MIN_VALUE or is_placeholder(value) or _NOT_VALUE_RE.search(value):
        return False
    if _ATTRIBUTE_RE.fullmatch(value) or _SLUG_RE.fullmatch(value):
        return False
    if "_" in value and _SEGMENT_RE.fullmatch(value):  # session_token_2: a snake_case name
        return False
    if _IDENTIFIER_RE.fullmatch(value):
        return len(value) >= 20 and "." not in value and "_" not in value
    return True


_EXPRESSION_CHARS_RE = re.compile(r"[()\[\]{}<>`]")


def strip_expression_chars(value: str) -> str:
    """``value`` without ``( ) [ ] { } < >`` and backticks: characters that make an unquoted
    value read as code but are ordinary in a password (newcomer review, item 1)."""
    return _EXPRESSION_CHARS_RE.sub("", value)


def is_literal_secret(value: str) -> bool:
    """Whether a *quoted* value (inside ``'…'``/``"…"``, or a JSON string under a secret key)
    can be a credential: a quoted value is a literal, never code, so brackets and backticks in
    it count as symbols (``"Xk9mQ2(vR7tLp"``: newcomer review, item 1); a passphrase of a few
    words counts too (:func:`is_secret_phrase`)."""
    if " " in value:
        return is_secret_phrase(value)
    return is_secret_value(strip_expression_chars(value))


_PHRASE_WORD_RE = re.compile(r"[^\s.,;:!?()\[\]{}<>`=]+")
_PROSE_WORDS = frozenset(
    {"the", "a", "an", "your", "my", "this", "that", "is", "are", "be", "must", "enter", "not",
     "field", "required", "invalid", "of", "to", "for", "and", "or", "new", "old", "here"}
)  # fmt: skip


def is_secret_phrase(value: str) -> bool:
    """Whether a *quoted* value with spaces can be a passphrase (``correct horse battery``,
    ``Zq8p W2rT5v``: review P5): two to four words, no sentence punctuation, no word of
    prose (``This field is required.``, ``Enter your password``), 8+ characters."""
    words = value.split(" ")
    if not 2 <= len(words) <= 4 or len(value) < 8 or is_placeholder(value):
        return False
    if not all(_PHRASE_WORD_RE.fullmatch(w) for w in words):
        return False
    return not any(w.lower() in _PROSE_WORDS or is_secret_name(w) for w in words)


def is_token_like(value: str, host: str = "") -> bool:
    """Whether a bare URL userinfo (no ``:``) is a token rather than a user name: 20+
    characters of ``[A-Za-z0-9_-]`` with letters and digits and 10+ distinct characters
    (``https://<40 hex>@github.com``: review P5); not the public key of a Sentry DSN
    (``host`` holds ``sentry``)."""
    return (
        len(value) >= 20
        and "sentry" not in host.lower()
        and _TOKEN_CHARS_RE.fullmatch(value) is not None
        and any(c.isdigit() for c in value)
        and any(c.isalpha() for c in value)
        and len(set(value)) >= 10
    )


_TOKEN_CHARS_RE = re.compile(r"[A-Za-z0-9_\-]+")
