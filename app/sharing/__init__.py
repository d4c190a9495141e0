"""Share links (API.md section 1, issue 13 item 1): revocable, optionally expiring URLs that let
anyone holding one read one thread, in a browser or as JSON.

- ``links.py``: opening a link. ``resolve(session, secret) -> LiveLink`` (NotFound: unknown or
  malformed secret; ``LinkGone`` (a ``Gone``, with ``.reason`` ``revoked`` / ``expired`` /
  ``thread_deleted``)), then ``record_use(session, link, audit, *, via, user_agent=None) ->
  int`` (counts and audits one use, commits; ``LinkGone`` if the link died meanwhile).
- ``service.py``: ``shared_thread(...)`` / ``shared_json(request, session, secret, audit, *,
  via)``: resolve, record the use, read the thread in one snapshot as ``GET
  /api/threads/{id}`` renders it.
- ``repository.py``: create, list and revoke links (owner or admin), and ``revoke_all`` for a
  thread being deleted.
"""
