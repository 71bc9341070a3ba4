"""Insight reads what routing recorded: its tests set presence and drain pools as routing's do."""

from tests.routing.conftest import _clean_routing_keys, on_commit  # noqa: F401
