"""Workflow: the ticket flows, above sla and routing. No models (the tables are ticketing's).

Owns services.py, the ticket_* operations every API, page and command goes through (submit,
approve, accept, reply, pause, complete, close, transfer, escalate), each one transaction that
applies ticketing's transitions and starts or stops the SLA clocks and routing; selectors.py
(the pool, my work, the public story); the tickets API (apis.py, serializers.py); the
`seed_demo` command; and the wiring that lets an SLA level move a ticket to another group
(apps.py hands `ticket_escalate_to_group` to sla.escalation).

May import: demo, routing, sla, ticketing (models, lifecycle, transitions, notify, access),
idempotency (the Idempotency-Key on submitting and replying),
handler_groups, notifications, accounts, config. Imported by: insight, console, config.urls."""
