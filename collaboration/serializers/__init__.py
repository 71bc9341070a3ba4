"""collaboration's serializers, split by job: watchers, links, merging."""
