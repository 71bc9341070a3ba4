"""merging (being written)."""
