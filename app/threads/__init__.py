"""Everything about threads: HTTP routes, schemas, tables, SQL and access rules."""
