"""``loomsync usage`` (issue 33 item 4): this machine's threads counted here
(:mod:`loomsync.usage.local`, the same counting and prices as the server's, from
loomsync.core.usage), or the server's figures (``GET /api/usage``) with ``--online``."""
