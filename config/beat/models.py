from django.db import models


class BeatLease(models.Model):
    """Who may send periodic tasks now (leases.py takes, renews and releases it)."""

    name = models.CharField(max_length=100, primary_key=True)
    holder = models.CharField(max_length=200)
    # Grows by one with every change of holder: the fencing token slot claims compare.
    token = models.BigIntegerField()
    expires_at = models.DateTimeField()
    renewed_at = models.DateTimeField()

    class Meta:
        db_table = "beat_lease"

    def __str__(self) -> str:
        return f"{self.name}: {self.holder} (token {self.token})"


class BeatSlot(models.Model):
    """The last schedule slot sent for a periodic task (PeriodicTask.name), and by whom."""

    task_name = models.CharField(max_length=200, primary_key=True)
    slot_start = models.DateTimeField()
    token = models.BigIntegerField()
    holder = models.CharField(max_length=200)
    claimed_at = models.DateTimeField()

    class Meta:
        db_table = "beat_slot"

    def __str__(self) -> str:
        return f"{self.task_name} @ {self.slot_start.isoformat()}"
