"""Usage and estimated cost of the agents (issue 33): the ``usage_daily`` side table, its
queries, ``GET /api/usage`` and the backfill."""
