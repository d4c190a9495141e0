"""Real servers a test or a benchmark starts for itself, each on its own 127.0.0.1 port in a
temporary folder: PgBouncer (:mod:`tests.infra.pgbouncer`) and Redis (:mod:`tests.infra.redis`)
from Debian's packages, and a PostgreSQL primary with streaming replicas from this machine's
server binaries (:mod:`tests.infra.cluster`). scripts/test-setup.sh (run by ``make test``)
installs the packages when they are missing; a test whose binary is still not there fails,
never skips (:func:`tests.infra.process.require`)."""
