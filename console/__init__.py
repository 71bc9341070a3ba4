"""Console: the server-rendered pages people work in, by audience — the agent's pool and the
ticket page (views/pool.py, views/ticket.py), the applicant's tickets and submission form
(views/applicant.py), the approvers' queue (views/approvals.py), the in-app inbox
(views/inbox.py) and the leaders' SLA compliance page (views/sla.py, its chart in charts.py).
Pages parse a form, check `ticketing.access` (the SLA page `sla.reports.report_scope`, the
rule the report API uses too) and call one service; they never re-derive a rule.

May import: ticketing (flows and core), routing, sla, notifications, handler_groups, config.
Imported by: config.urls only."""
