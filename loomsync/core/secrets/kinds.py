"""The kinds of credential the detector claims: marker names, descriptions, public prefixes.

The marker names are the contract shared with the labelled set (tests/secrets/labelled/) and
with every reader of a redacted thread (``[REDACTED:<kind>]``, issue 12 item 2). A kind's
*public prefixes* are the fixed, documented beginnings of its tokens (``AKIA``, ``ghp_``): a
masked preview may show one of them and the length, never any other character.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Kind:
    """One kind of credential: its marker name, what it is, and its public prefixes."""

    name: str
    description: str
    prefixes: tuple[str, ...] = ()


_ALL = (
    Kind("aws-access-key", "AWS access key id (AKIA…, ASIA…)", ("AKIA", "ASIA", "ABIA", "ACCA")),
    Kind("aws-secret-key", "AWS secret access key (40 characters after its name)"),
    Kind("github-token", "GitHub token (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_)",
         ("github_pat_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_")),
    Kind("gitlab-token", "GitLab token (glpat-, gldt-, glrt-, …)",
         ("glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "glcbt-", "glimt-", "glptt-",
          "glagent-", "gloas-", "GR1348941")),
    Kind("slack-token", "Slack token (xoxb-, xoxp-, xapp-, …)",
         ("xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-", "xoxe-", "xapp-")),
    Kind("slack-webhook", "Slack incoming-webhook URL", ("https://hooks.slack.com/",)),
    Kind("stripe-key", "Stripe secret or restricted key, webhook secret",
         ("sk_live_", "sk_test_", "rk_live_", "rk_test_", "whsec_")),
    Kind("openai-key", "OpenAI API key (sk-proj-, sk-svcacct-, sk-…)",
         ("sk-proj-", "sk-svcacct-", "sk-admin-", "sk-")),
    Kind("anthropic-key", "Anthropic API key (sk-ant-…)", ("sk-ant-",)),
    Kind("google-api-key", "Google API key (AIza…), OAuth client secret, access token",
         ("AIza", "GOCSPX-", "ya29.")),
    Kind("azure-storage-key", "Azure storage account key (88 base64 characters)"),
    Kind("twilio-key", "Twilio account or API key SID (AC…, SK…)", ("AC", "SK")),
    Kind("sendgrid-key", "SendGrid API key (SG.…)", ("SG.",)),
    Kind("mailchimp-key", "Mailchimp API key (…-us<N>)"),
    Kind("npm-token", "npm token (npm_…, _authToken in .npmrc)", ("npm_",)),
    Kind("pypi-token", "PyPI upload token (pypi-AgE…)", ("pypi-",)),
    Kind("discord-token", "Discord bot token or webhook URL"),
    Kind("telegram-bot-token", "Telegram bot token (<bot id>:<35 characters>)"),
    Kind("square-token", "Square access token or OAuth secret", ("sq0atp-", "sq0csp-", "EAAA")),
    Kind("huggingface-token", "Hugging Face token (hf_…)", ("hf_", "api_org_")),
    Kind("digitalocean-token", "DigitalOcean token (dop_v1_, doo_v1_, dor_v1_)",
         ("dop_v1_", "doo_v1_", "dor_v1_")),
    Kind("jwt", "JSON Web Token (eyJ….eyJ….…)", ("eyJ",)),
    Kind("private-key", "PEM or PuTTY private key block", ("-----BEGIN",)),
    Kind("url-password", "password in a URL's userinfo (scheme://user:pass@host)"),
    Kind("authorization-header", "value of an Authorization header (Bearer, Basic, token, …)"),
    Kind("cookie", "value of a Cookie or Set-Cookie header, curl -b"),
    Kind("secret-assignment", "value assigned to a name that says secret/token/password/key"),
    Kind("password", "password given on a command line (--password=, mysql -p, sshpass -p)"),
)  # fmt: skip

#: Every kind by marker name, in the order of the table above.
KINDS: dict[str, Kind] = {kind.name: kind for kind in _ALL}


def preview(kind: str, value: str) -> str:
    """A masked preview of a finding: the kind's public prefix if ``value`` starts with one,
    then ``…`` and the length in characters (``ghp_…(40 chars)``); never another character."""
    entry = KINDS.get(kind)
    head = ""
    if entry is not None:
        head = next((p for p in entry.prefixes if value.startswith(p) and len(value) > len(p)), "")
    return f"{head}…({len(value)} chars)"
