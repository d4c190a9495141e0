"""The audit trail: who created, deleted, forked or re-shared which thread, when, from where."""
