"""Local storage: the thread files, their summaries index, the local search, redaction on save.

:mod:`loomsync.store.api` is the :class:`ThreadStore` protocol; :mod:`loomsync.store.local` the
files on disk; :mod:`loomsync.store.memory` an in-memory store.
"""
