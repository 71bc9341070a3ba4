"""Insight: what supervisors ask of the routing and SLA record.

Owns the figures (assignment_figures.py: per member and day, from AssignmentEvent rows;
queue_figures.py: a group's pool per hour or day — arrivals, time to assignment and
acceptance, abandonment, service level, occupancy — in one SQL statement), staffing (Erlang C
in erlang.py, pure arithmetic; required against available members per hour in staffing.py),
the strategy simulator (simulator.py: a discrete-event replay of a group's recorded arrivals,
handle times and presence windows, or of a synthetic day, through the real routing
strategies; scenarios.py builds its input; the Simulation model, the `insight.simulate`
worker task and `manage.py simulate_routing`), and their APIs (apis.py: /api/metrics/...,
/api/staffing/..., /api/simulations/). Every read about a group follows the leader rule
(handler_groups.access).

May import: workflow's selectors, routing, sla, ticketing's core, handler_groups, config.
Imported by: console, config.urls."""
