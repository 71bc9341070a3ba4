"""What admin does with failed mail: retry a message after a fix (or release one held as a
flood), or dismiss it as not worth a ticket."""

from __future__ import annotations

from datetime import datetime

from django.utils.translation import gettext as _

from config.errors import ConflictError
from mail.models import FailedMail, FailedMailStatus, MessageOutcome
from mail.services import intake


def failed_mail_retry(*, failed_mail_id: int, now: datetime) -> intake.Received:
    """Run the kept message through intake again (source "retry"; the flood limit does not
    apply: someone looked at it and let it through). It is marked retried unless it failed
    again, in which case intake has updated its reason and it keeps waiting. A message that
    meanwhile arrived by another path is a duplicate now: retried too.

    Not in one transaction with intake (which owns and commits its own): the mark is a
    compare-and-set after intake's commit. Two retries of one message at once are decided
    once by intake's lock on the Message-ID (the second is a duplicate); a database outage
    between the two leaves the row waiting, and the next retry finds the duplicate."""
    failed = FailedMail.objects.select_related("mailbox").get(pk=failed_mail_id)
    if failed.status != FailedMailStatus.WAITING:
        raise ConflictError(
            _("This message was already %(status)s.") % {"status": failed.get_status_display()}
        )
    if failed.mailbox is None:
        raise ConflictError(_("The mailbox this message came to no longer exists."))
    result = intake.receive(
        mailbox=failed.mailbox,
        raw=bytes(failed.raw),
        source="retry",
        now=now,
        allow_flood=True,
    )
    still_failing = result.outcome == MessageOutcome.KEPT and result.failed_mail_id in (
        None,
        failed.pk,
    )
    changes: dict = {"retried": now}
    if not still_failing:
        # Done, or kept again under another identity (a parser fix read a Message-ID the
        # first attempt could not): that new row is the one waiting now.
        changes["status"] = FailedMailStatus.RETRIED
    FailedMail.objects.filter(pk=failed.pk, status=FailedMailStatus.WAITING).update(**changes)
    return result


def failed_mail_dismiss(*, failed_mail_id: int) -> None:
    """Nothing more to do with the message (spam, a test): it stays, whole, marked dismissed
    (a later delivery of it is received afresh). A compare-and-set: only a waiting message is
    dismissed (409 otherwise)."""
    done = FailedMail.objects.filter(pk=failed_mail_id, status=FailedMailStatus.WAITING).update(
        status=FailedMailStatus.DISMISSED
    )
    if not done:
        failed = FailedMail.objects.get(pk=failed_mail_id)  # DoesNotExist: 404
        raise ConflictError(
            _("This message was already %(status)s.") % {"status": failed.get_status_display()}
        )
