from celery import shared_task

from .services import fetching, notices

FETCH_ALL_TASK = "mail.fetch_all"


@shared_task(
    name=FETCH_ALL_TASK,
    ignore_result=True,
    # Past fetching's own budget (it stops starting batches after FETCH_ALL_BUDGET_SECONDS)
    # by more than a batch takes. A run cut short loses nothing: what it did not mark is read
    # again by the next one.
    soft_time_limit=fetching.FETCH_ALL_BUDGET_SECONDS + 90,
    time_limit=fetching.FETCH_ALL_BUDGET_SECONDS + 120,
)
def fetch_all() -> list[dict[str, object]]:
    """Every 30 s by celery-beat (the data migration): new mail in every active IMAP mailbox.
    Safe to run twice at once (the per-mailbox lock): a run that finds a mailbox being fetched
    skips it."""
    return [result.as_dict() for result in fetching.fetch_all()]


@shared_task(name=notices.NOTICE_TASK, ignore_result=True, soft_time_limit=30, time_limit=60)
def notice(**kwargs) -> bool:
    """The one notice a refused or kept message's sender gets (services.notices): once per
    message whatever runs it twice (its Message-ID is the unique key)."""
    return notices.send_notice(**kwargs)
