"""Queueing: the customer-service queue ranking served to chat and call platforms — the pure
algorithm (ranking.py), its Redis state (store.py: RR levels and jump lists), the service and
`POST /api/queueing/rank/`. It stands alone: nothing else in the project depends on it.

May import: config."""
