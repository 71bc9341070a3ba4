"""links (being written)."""
