"""Tickets by e-mail: mailboxes that turn messages into tickets and replies, threaded both
ways, with attachments; loops stopped and nothing lost.

Owns Mailbox (where mail arrives, and the From of what goes out), MailMessage (every message
received or sent, by Message-ID: the threading index and the duplicate check), FailedMail
(messages kept whole that could not become a ticket or reply, and those held for review)
and ImapCursor (how far each IMAP folder has been read). Mail in: parsing.py, quoting.py and
loops.py (pure: no Django), services.intake (one message → a ticket, a reply, or a kept
failure), services.fetching (IMAP), the pipe command (management/commands/mail_in.py) and the
HTTP endpoint (apis.py). Mail out: outbound.py composes the e-mail channel's messages of a
ticket as its thread (registered with notifications.channels.email at start).

May import: workflow, collaboration, attachments, satisfaction, sla, routing, ticketing,
notifications, handler_groups, accounts, config. Imported by: console, config.urls."""
