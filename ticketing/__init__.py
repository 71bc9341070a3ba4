"""Ticketing: the core of a ticket, below sla and routing — tickets, replies and their audit
trail (models; every table of the ticket flows is here), lifecycle.py, the state machine
(every transition, and which actions a ticket's state allows now); transitions.py, the
compare-and-set primitive that applies a transition and writes its audit record (the one
writer of the trail); notify.py, lifecycle events turned into notifications; access.py, the
one home of who may see and do what to a ticket (require_* for the API and the pages); admin.

The flows that use them (submit, approve, route, reply, close; the pool; the tickets API) are
the workflow app's.

May import: handler_groups, notifications, accounts, config. Imported by: sla, routing, demo,
workflow, insight, console."""
