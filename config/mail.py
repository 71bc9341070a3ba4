"""The development e-mail backend: each message is one INFO log line (recipients and subject),
in the same JSON stream as everything else, instead of Django's console backend printing
whole MIME messages across many lines. Production settings send through SMTP (EMAIL_URL)."""

import logging

from django.core.mail.backends.base import BaseEmailBackend

logger = logging.getLogger("ticketdesk.mail")


class LogEmailBackend(BaseEmailBackend):
    def send_messages(self, email_messages) -> int:
        for message in email_messages:
            logger.info(
                "email",
                extra={
                    "to": list(message.to) + list(message.cc) + list(message.bcc),
                    "subject": message.subject,
                    "from": message.from_email,
                },
            )
        return len(email_messages)
