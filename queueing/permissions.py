from django.contrib.auth.backends import ModelBackend
from django.utils.translation import gettext_lazy as _
from rest_framework.permissions import BasePermission

RANK_QUEUE = "queueing.rank_queue"

_model_backend = ModelBackend()


class CanRankQueue(BasePermission):
    """Staff, or a user (service account) given the `queueing.rank_queue` permission."""

    message = _("Ranking a queue needs the queueing.rank_queue permission.")

    def has_permission(self, request, view) -> bool:
        user = request.user
        if not (user and user.is_authenticated):
            return False
        if user.is_staff:
            return True
        # A token's person comes with their permissions, their own and their groups', read with
        # the token (accounts/auth.py): no query here. A browser session's: one query for the
        # user's own (those of an active user only, as has_perm reads them) decides for a
        # service account; has_perm, which reuses what it read and adds the groups', for the rest.
        return RANK_QUEUE in _model_backend.get_user_permissions(user) or user.has_perm(RANK_QUEUE)
