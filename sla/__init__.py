"""SLA: rules (matched by priority and category), business calendars, the pure business-time
clock (clock.py) and deadlines (deadlines.py), starting, pausing, resuming and finalising a
ticket's clocks (services.py), the scanner that warns and marks timeouts exactly once
(scanner.py; audit rows through ticketing.transitions.record), the report (reports.py: per
group, per day, and who may read it; renderers.py: as CSV) and a ticket's clocks as data
(tracks.py, what `selectors.sla_timeline` returns; how they look is console's).

May import: ticketing's core (models, lifecycle, transitions; tags, for the report's tag
filter), handler_groups, notifications, config. Imported by: routing, ticketing's flows,
console."""
