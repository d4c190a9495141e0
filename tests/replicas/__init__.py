"""Read replicas for real (issue 18 items 2 and 5): a primary and a streaming replica of the
tests' own (tests/infra/cluster.py) behind two real server instances."""
