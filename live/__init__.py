"""Live pages: what changed on a ticket, pushed to the consoles that show it.

Owns the one Redis stream of ticket events (`td:live`), the Server-Sent Events endpoint
`GET /events/` that fans it out to each open console (the access rules of the page applied to
every event: an applicant's page never receives a note, nor its id), and who is viewing or
replying on a ticket (a Redis hash per ticket).

Two layers (pyproject.toml's contract): `live.events` (publishing; imports config only, so the
ticketing core can publish from the one place every change passes) sits with the independent
low apps; the rest (`stream`, `viewers`, `views`) reads ticketing.access and sits above
workflow, below console. Redis down never fails a write and never fails a page: publishing
gives up at once (config/outage.py) and the pages work as plain pages."""
