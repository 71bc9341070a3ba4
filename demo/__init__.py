"""Demo: the history `make run` shows on a fresh database (history.py), written in bulk.

It is not a product write path: `seed_demo --history-days N` calls it once, on demo groups
that have no tickets yet, to fill N days (`make run` asks for 28) of tickets, presence spans,
assignment events and SLA results the way the product would have left them.

May import: routing's and sla's models and pure helpers, ticketing's models, handler_groups,
config. Imported by: workflow's seed_demo command."""
