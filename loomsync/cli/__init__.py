"""The ``loomsync`` command: :mod:`loomsync.cli.main` (the typer app and ``main``), one module
per command group (links, open, search, secrets, sync) and how a thread is shown (render, shown).
"""
