from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class IdempotencyRecord(models.Model):
    """One caller's key and the answer its first request got. `status_code` is null while
    that request's transaction is still open (no other transaction ever sees it so)."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, verbose_name=_("caller")
    )
    key = models.CharField(_("key"), max_length=255)
    # sha256 of the method, the route and the canonical JSON body.
    fingerprint = models.CharField(_("request fingerprint"), max_length=64)
    created = models.DateTimeField(_("created"), db_index=True)  # the purge sweep's range
    status_code = models.PositiveSmallIntegerField(_("status code"), null=True)
    body = models.JSONField(_("body"), null=True)

    class Meta:
        verbose_name = _("idempotency record")
        verbose_name_plural = _("idempotency records")
        constraints = [
            # The claim's ON CONFLICT target: one record per caller and key.
            models.UniqueConstraint(fields=["user", "key"], name="idempotency_one_per_key")
        ]

    def __str__(self) -> str:
        return f"{self.user_id}:{self.key}"
