"""Routing: who gets a ticket, and when.

Owns agents' presence (AgentPresence, the Redis idle pools and the Lua pick in idle_pool.py,
reconciliation), the assignment strategies (a registry keyed by the source system's codes,
one eligibility rule, member figures in one statement from the handlers' load rows, which
triggers on the ticket table keep: loads.py), routing at approval and transfer (route.py),
draining a group's pool (drain.py), offers and reclaims (offers.py), overflow, the periodic
sweeps, and the record of what routing did: AssignmentEvent (one row per routing outcome),
RoutingDecision (why this member) and PresenceSpan (the presence history), with the presence
API. What supervisors read from that record (figures, staffing) is insight's.

May import: ticketing's core (models, lifecycle, transitions, notify, access), sla,
handler_groups, notifications, config. Imported by: demo, workflow, insight, console,
config.urls."""
