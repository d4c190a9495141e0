"""loomsync server: the /api/threads service on PostgreSQL."""
