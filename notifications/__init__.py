"""Notifications: telling people. Owns the templates (NotifyTemplate, rendered with params,
and NotifyTemplateTranslation, its wording per language: each recipient reads theirs, with
times in their zone), `sending.send` (one inbox message per recipient and one outbox row per
external delivery, in the caller's transaction, exactly once per dedupe key), the channels
registry (in_app, email, webhook), delivery by a worker with backoff and failure hooks
(delivery.py), the outbox sweep, and the inbox (selectors, read marks, its API). A ticket is
referenced by id only.

May import: config, accounts (each recipient's language and zone). Imported by: ticketing's
core (notify), sla, routing, console."""
