"""A changed password revokes every API token of that account, whichever path changed it
(the password-change page, admin, `changepassword`, a service): the check sits on the user
row itself. Sessions end by Django's own session hash."""

from django.contrib.auth import get_user_model
from django.db.models.signals import post_save, pre_save
from django.dispatch import receiver

from .services import tokens_revoke_all

User = get_user_model()


@receiver(pre_save, sender=User, dispatch_uid="accounts.password_change_seen")
def _note_password_change(sender, instance, raw=False, update_fields=None, **kwargs):
    if raw or instance.pk is None:
        return
    if update_fields is not None and "password" not in update_fields:
        return
    stored = sender.objects.filter(pk=instance.pk).values_list("password", flat=True).first()
    instance._password_changed = stored is not None and stored != instance.password


@receiver(post_save, sender=User, dispatch_uid="accounts.password_change_revokes_tokens")
def _revoke_tokens_on_password_change(sender, instance, created=False, raw=False, **kwargs):
    if raw or created or not getattr(instance, "_password_changed", False):
        return
    instance._password_changed = False
    tokens_revoke_all(user_id=instance.pk)
