"""watchers (being written)."""
