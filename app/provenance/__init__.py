"""Provenance index (issue 32): the files each thread's tool calls touched (``thread_files``),
beside the commits it observed (``thread_commits``), and the queries from code to conversation:
by commit, by file, by line. Extraction is shared with the client (loomsync/core/provenance)."""
