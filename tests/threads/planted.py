"""Invented credentials shaped like real ones (prefix, length, alphabet, checksum), planted in
the server's secret-scan tests. None is, or ever was, a real credential: each is made here from
a seed. Only the kinds the placeholder detector knows (``aws-access-key``, ``github-token``,
``private-key``), which the detector proper keeps (issue 12)."""

from __future__ import annotations

import base64
import random
import re
import string

from tests.invented import BASE62, checksummed

#: AWS access key ids: ``AKIA`` and 16 characters of the base32 alphabet.
AWS_ALPHABET = string.ascii_uppercase + "234567"


def aws_access_key(seed: str) -> str:
    """``AKIA`` + 16 base32 characters."""
    rnd = random.Random(f"aws:{seed}")
    return "AKIA" + "".join(rnd.choice(AWS_ALPHABET) for _ in range(16))


def github_token(seed: str) -> str:
    """A classic personal access token: ``ghp_``, 30 base62 characters and their CRC32 in 6
    base62 digits (GitHub's checksum)."""
    rnd = random.Random(f"github:{seed}")
    body = "".join(rnd.choice(BASE62) for _ in range(30))
    return checksummed("ghp_", body)


def private_key(seed: str) -> str:
    """A PEM block of an RSA private key (random bytes in base64 lines of 64)."""
    rnd = random.Random(f"pem:{seed}")
    encoded = base64.b64encode(bytes(rnd.randrange(256) for _ in range(600))).decode()
    lines = [encoded[i : i + 64] for i in range(0, len(encoded), 64)]
    return (
        "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END RSA PRIVATE KEY-----"
    )


def planted(seed: str) -> dict[str, str]:
    """One credential of each kind, by kind."""
    return {
        "aws-access-key": aws_access_key(seed),
        "github-token": github_token(seed),
        "private-key": private_key(seed),
    }


def fragments(secret: str) -> list[str]:
    """Pieces of ``secret`` that must appear nowhere once it is gone, lower-cased (a tsvector
    holds lower-cased lexemes, and a search index splits text at punctuation): the whole value,
    its part after the prefix, and every alphanumeric run of 12 characters or more."""
    pieces = {secret.lower(), secret.split("_", 1)[-1].lower()}
    pieces |= {run.lower() for run in re.findall(r"[A-Za-z0-9]{12,}", secret)}
    return sorted(pieces)
