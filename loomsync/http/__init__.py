"""Talking to the server: the HTTP client, its responses and problems, share links, web login.

:mod:`loomsync.http.connect` builds the configured store (``open_store``) and client.
"""
