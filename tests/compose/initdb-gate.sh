#!/bin/sh
# Run by the database image during its first initialisation (/docker-entrypoint-initdb.d), while
# its temporary server listens on the Unix socket only: says so, then waits (at most 10 minutes)
# until the test opens the gate.
touch /tmp/loomsync-gate-waiting
waited=0
while [ ! -e /tmp/loomsync-gate-open ] && [ "$waited" -lt 3000 ]; do
    sleep 0.2
    waited=$((waited + 1))
done
