"""collaboration's apis, split by job: watchers, links, merging."""
