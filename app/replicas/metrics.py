"""Prometheus series of read routing (only registered when replicas are configured):

- ``loomsync_db_reads_total{target, reason}``: list and search reads by where they ran:
  ``target="replica", reason="caught-up"``, or ``target="primary"`` with ``reason``
  ``not-replicated-yet`` (the replica had not replayed the primary's position within
  ``LOOMSYNC_REPLICA_WAIT``), ``replica-down`` (no replica answers, or the one tried failed,
  froze past ``LOOMSYNC_REPLICA_READ_TIMEOUT`` or is no standby), ``lagging`` (every answering replica is past ``LOOMSYNC_REPLICA_MAX_LAG``) or
  ``replica-error`` (the read failed on the replica for another reason, and was run again);
- ``loomsync_replica_up{replica}``: 1 while reads may go there, 0 while it is skipped;
- ``loomsync_replica_lag_seconds{replica}``, ``loomsync_replica_lag_bytes{replica}``: how far
  behind the primary the last probe found it (app/replicas/state.py, PrimaryHistory).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from prometheus_client import CollectorRegistry, Counter
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from app.replicas.state import Replica

PRIMARY = "primary"
REPLICA = "replica"
CAUGHT_UP = "caught-up"
NOT_REPLICATED_YET = "not-replicated-yet"
REPLICA_DOWN = "replica-down"
LAGGING = "lagging"
REPLICA_ERROR = "replica-error"


class ReplicaCollector(Collector):
    """The replicas' state, read when Prometheus scrapes."""

    def __init__(self, replicas: Sequence[Replica]) -> None:
        self.replicas = replicas

    def collect(self) -> Iterator[GaugeMetricFamily]:
        """Yield up, lag in seconds and lag in bytes, one sample per replica."""
        up = GaugeMetricFamily(
            "loomsync_replica_up", "1 while reads may go to the replica", labels=["replica"]
        )
        seconds = GaugeMetricFamily(
            "loomsync_replica_lag_seconds",
            "How long ago the replica last held everything the primary had (last probe)",
            labels=["replica"],
        )
        size = GaugeMetricFamily(
            "loomsync_replica_lag_bytes",
            "WAL bytes the replica had not replayed yet (last probe)",
            labels=["replica"],
        )
        for replica in self.replicas:
            up.add_metric([replica.name], 1.0 if replica.up else 0.0)
            seconds.add_metric([replica.name], replica.lag_seconds)
            size.add_metric([replica.name], float(replica.lag_bytes))
        yield up
        yield seconds
        yield size


def register(registry: CollectorRegistry, replicas: Sequence[Replica]) -> Counter:
    """Register the replica gauges in ``registry``; return the reads counter (labels target,
    reason)."""
    registry.register(ReplicaCollector(replicas))
    return Counter(
        "loomsync_db_reads",
        "List and search reads by the database they ran on and why",
        ("target", "reason"),
        registry=registry,
    )
