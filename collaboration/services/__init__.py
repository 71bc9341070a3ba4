"""collaboration's services, split by job: watchers, links, merging."""
