"""Idempotency keys (IETF draft "The Idempotency-Key HTTP Header Field"): a retried POST gets
the answer of its first attempt instead of writing again (:mod:`app.idempotency.keys`)."""
