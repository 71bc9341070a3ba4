"""collaboration's selectors, split by job: watchers, links, merging."""
