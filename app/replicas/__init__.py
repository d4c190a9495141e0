"""Read replicas (issue 18 item 2): list and search read from a streaming replica that has
replayed the primary's WAL at least up to where the primary was when the read began, so a
write acknowledged by any server instance is seen by every later list or search.

- :mod:`app.replicas.lsn`: the primary's current WAL position, one reading shared by the reads
  that wait for it;
- :mod:`app.replicas.state`: one replica: its engine, whether it answers, how stale it is;
- :mod:`app.replicas.monitor`: the background probe that measures lag and lets a skipped
  replica rejoin;
- :mod:`app.replicas.routing`: which database a read runs on, and the FastAPI dependency;
- :mod:`app.replicas.metrics`: the Prometheus series.

Without ``LOOMSYNC_DATABASE_REPLICA_URLS`` none of this runs: reads use the primary's session
exactly as :func:`app.database.get_session` gives it.
"""
