"""Token usage and its estimated cost (issue 33), shared by the server (app/usage) and the
client (``loomsync usage``) so both count and price the same way:

- :mod:`loomsync.core.usage.counting`: what one thread's messages add up to, per UTC day and
  model (:class:`~loomsync.core.usage.counting.Sums`), and the thread's agent, repository and
  workspace;
- :mod:`loomsync.core.usage.prices`: unit prices from the ``genai-prices`` package or a
  ``LOOMSYNC_PRICES_FILE``, dated, and the cost of a :class:`~loomsync.core.usage.counting.Sums`.
"""
