"""The ``loomsync`` command: :mod:`loomsync.cli.main` (the typer app and ``main``), one module
per command group (links, mcpserver, open, search, secrets, sync) and how a thread is shown
(render; the redaction of what is shown and short ids are in loomsync/store: shown, shortids).
"""
