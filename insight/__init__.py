"""Insight: what supervisors ask of the routing record.

Owns the strategy simulator (simulator.py: a discrete-event replay of a group's recorded
arrivals, handle times and presence windows, or of a synthetic day, through the real routing
strategies; scenarios.py builds its input; the Simulation model, the simulations API, the
`insight.simulate` worker task and `manage.py simulate_routing`) and, later, the supervisor
dashboards' data.

May import: routing, sla, ticketing's models, handler_groups, config. Imported by: console,
config.urls."""
