"""Routing: who gets a ticket, and when.

Owns agents' presence (AgentPresence, the Redis idle pools and the Lua pick in idle_pool.py,
reconciliation), the assignment strategies (a registry keyed by the source system's codes,
one eligibility rule, member figures in one statement from the handlers' load rows, which
triggers on the ticket table keep: loads.py), routing at approval and transfer
(route.py), draining a group's queue (drain.py), offers and reclaims (offers.py), overflow,
the periodic sweeps, AssignmentEvent (one row per routing outcome) and the assignment
metrics, the presence history (PresenceSpan) and staffing (Erlang C in erlang.py, pure
arithmetic; required against available agents per hour in staffing.py), with the presence,
metrics and staffing APIs.

May import: ticketing's core (models, lifecycle, transitions, notify), sla, handler_groups,
notifications, config. Imported by: ticketing's flows (services, apis), console, config.urls."""
