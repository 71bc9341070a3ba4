from django.db import models
from django.utils.translation import gettext_lazy as _


class RankingPermission(models.Model):
    """No table: holds the `queueing.rank_queue` permission that service accounts are given to
    call the ranking endpoint (staff may always call it)."""

    class Meta:
        verbose_name = _("ranking permission")
        verbose_name_plural = _("ranking permissions")
        managed = False
        default_permissions = ()
        permissions = [("rank_queue", "Can rank a customer-service queue")]

    def __str__(self) -> str:
        return "queue ranking permissions"
