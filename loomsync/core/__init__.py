"""What the server shares with the client: the only package of loomsync that ``app/`` may import.

- :mod:`loomsync.core.document`: the thread document (model, ids, JSON text, codec, merge patch);
- :mod:`loomsync.core.textsearch`: the one analyzer of the server's index and the local search;
- :mod:`loomsync.core.secrets`: the secret detector (redaction on the client, findings on the server);
- :mod:`loomsync.core.version`: the version both report.

Nothing here imports the client's other packages (store, sync, http, cli, importers) or its
top-level modules; tests/test_layering.py checks both directions.
"""
