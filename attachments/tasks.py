from celery import shared_task

from . import services


@shared_task(name=services.THUMBNAIL_TASK, ignore_result=True)
def thumbnail(blob_id: int) -> bool:
    """A raster image's preview (on the slow queue: Pillow's work never delays an SLA level)."""
    return services.make_thumbnail(blob_id)


@shared_task(name="attachments.sweep_unattached", ignore_result=True)
def sweep_unattached() -> int:
    """Uploads not attached within 24 hours (hourly, from the migration's schedule)."""
    return services.sweep_unattached()
