"""Console: the server-rendered pages people work in, by audience — the agent's pool and the
ticket page (views/pool.py, views/ticket.py), the applicant's tickets and submission form
(views/applicant.py), the approvers' queue (views/approvals.py), the in-app inbox
(views/inbox.py) and the leaders' SLA compliance page (views/sla.py). The supervisor dashboard
(views/supervisor.py) reads insight. Pictures compute their geometry in Python (timeline.py:
the ticket page's SLA timeline; charts.py: the daily, staffing and simulation charts) and
their markup is in templates/console/svg/, escaped there. Pages parse a form, check
`ticketing.access` or the leader rule (`handler_groups.selectors.groups_led_by`; the SLA page
through `sla.reports.report_scope`, as the report API) and call one service; they never
re-derive a rule.

May import: insight, workflow, ticketing, routing, sla, notifications, handler_groups,
accounts, config.
Imported by: config.urls only."""
