from rest_framework.permissions import BasePermission


class CanRankQueue(BasePermission):
    """Staff, or a user (service account) given the `queueing.rank_queue` permission."""

    message = "Ranking a queue needs the queueing.rank_queue permission."

    def has_permission(self, request, view) -> bool:
        user = request.user
        return bool(
            user
            and user.is_authenticated
            and (user.is_staff or user.has_perm("queueing.rank_queue"))
        )
