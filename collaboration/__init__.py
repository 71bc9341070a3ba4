"""Working together on tickets: watchers (the team's colleagues and the applicant's CC),
links between tickets (related, parent and child) and merging a duplicate into another.

Owns Watcher and TicketLink (models.py, low in the layers: ticketing.access reads watchers to
let a watcher see a ticket's public story, and the workflow's completion reads a parent's open
children), and the services, selectors and APIs that change and list them, the merge
(services.ticket_merge) included. @mentions in internal notes are the reply's business
(workflow.mentions).

May import: workflow, attachments, sla, ticketing, notifications, handler_groups, accounts,
config. Imported by: insight (nothing yet), console, config.urls; its models by ticketing
(access, notify) and workflow."""
