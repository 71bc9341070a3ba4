"""The agent's toolbox: canned responses and macros, saved views, bulk actions and the
ticket export.

Owns CannedResponse, Macro and SavedView (models.py) with their scopes (personal, a group's,
global: scopes.py), the placeholders both fill in (placeholders.py), a macro's run (one
transaction, one history entry: macros.py), bulk actions (bulk.py, each ticket on its own),
the saved views' filters and counts (saved_views.py) and the CSV export (export.py). Tags,
categories and custom fields are ticket data and live lower, in ticketing (tags.py,
categories.py, fields.py), where the pool, search and the SLA report filter on them.

May import: mail, collaboration, workflow, attachments, satisfaction, sla, routing,
ticketing, notifications, handler_groups, accounts, config. Imported by: search, console,
config.urls."""
