from django.contrib.auth import get_user_model
from django.utils.translation import gettext as _
from rest_framework import serializers

from config.errors import InvalidArgument

from .models import MAX_OFFER_TIMEOUT_SECONDS, GroupStatus, HandlerGroup, assign_strategy_choices
from .services import ROUTING_FIELDS, ROUTING_NUMBERS, check_overflow


class HandlerGroupSerializer(serializers.ModelSerializer):
    """Members travel as a list of user ids (`members`; `member_ids` is the same list under
    its other name); the comma-separated column is never exposed. The escalation contact is
    a user id, as `escalation_contact_id` or under the name the SLA issue gives it,
    `escalation_contact`."""

    members = serializers.ListField(
        child=serializers.IntegerField(min_value=1), required=False, max_length=500
    )
    member_ids = serializers.ListField(
        child=serializers.IntegerField(min_value=1), required=False, max_length=500
    )
    leader_id = serializers.IntegerField(required=False, allow_null=True, min_value=1)
    escalation_contact_id = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        help_text="Who escalation ladders can tell besides the leader (the leader's manager).",
    )
    # Written here, read back by to_representation (the model's attribute is the user).
    escalation_contact = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        write_only=True,
        help_text="The same user id as escalation_contact_id.",
    )
    assign_strategy = serializers.ChoiceField(choices=[], default=0)
    status = serializers.ChoiceField(choices=GroupStatus.choices, default=GroupStatus.ENABLED)
    overflow_group_id = serializers.IntegerField(required=False, allow_null=True, min_value=1)

    class Meta:
        model = HandlerGroup
        fields = [
            "id",
            "name",
            "leader_id",
            "escalation_contact_id",
            "escalation_contact",
            "members",
            "member_ids",
            "assign_strategy",
            "last_assign_index",
            "status",
            *ROUTING_FIELDS,
        ]
        read_only_fields = ["id", "last_assign_index"]
        extra_kwargs = {
            **{field: {"min_value": 0, "max_value": 10**7} for field in ROUTING_NUMBERS},
            # A delayed task checks each offer; it must fit the broker's visibility timeout.
            "offer_timeout_seconds": {"min_value": 0, "max_value": MAX_OFFER_TIMEOUT_SECONDS},
            "target_answer_seconds": {"min_value": 1, "max_value": 10**7},
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["assign_strategy"].choices = assign_strategy_choices()

    def to_representation(self, group: HandlerGroup) -> dict:
        data = super().to_representation(group)
        data["members"] = data["member_ids"] = group.member_ids
        data["escalation_contact"] = group.escalation_contact_id
        return data

    def validate(self, attrs):
        given = [attrs.pop(key) for key in ("members", "member_ids") if key in attrs]
        if len(given) == 2 and given[0] != given[1]:
            raise serializers.ValidationError(
                {"members": [_("Give members or member_ids, not two different lists.")]}
            )
        if given:
            attrs["member_ids"] = self._valid_members(given[0])
        elif self.instance is None:
            attrs["member_ids"] = []
        if "escalation_contact" in attrs:
            contact = attrs.pop("escalation_contact")
            if "escalation_contact_id" in attrs and attrs["escalation_contact_id"] != contact:
                raise serializers.ValidationError(
                    {
                        "escalation_contact": [
                            _("Give escalation_contact or escalation_contact_id, not two users.")
                        ]
                    }
                )
            attrs["escalation_contact_id"] = contact
        overflow = attrs.get("overflow_group_id")
        if overflow is not None:
            try:
                check_overflow(
                    group_id=self.instance.pk if self.instance is not None else None,
                    overflow_group_id=overflow,
                )
            except InvalidArgument as exc:
                raise serializers.ValidationError({exc.field: [exc.message]}) from None
            if not HandlerGroup.objects.filter(pk=overflow).exists():
                raise serializers.ValidationError(
                    {
                        "overflow_group_id": [
                            _("No handler group with id %(id)s.") % {"id": overflow}
                        ]
                    }
                )
        return attrs

    def _valid_members(self, ids: list[int]) -> list[int]:
        if len(set(ids)) != len(ids):
            raise serializers.ValidationError({"members": [_("Member ids must be unique.")]})
        found = set(get_user_model().objects.filter(pk__in=ids).values_list("pk", flat=True))
        missing = [i for i in ids if i not in found]
        if missing:
            raise serializers.ValidationError(
                {"members": [_("No user with id(s) %(ids)s.") % {"ids": missing}]}
            )
        return ids

    def validate_leader_id(self, leader_id: int | None) -> int | None:
        return _existing_user(leader_id)

    def validate_escalation_contact_id(self, contact_id: int | None) -> int | None:
        return _existing_user(contact_id)

    def validate_escalation_contact(self, contact_id: int | None) -> int | None:
        return _existing_user(contact_id)


def _existing_user(user_id: int | None) -> int | None:
    if user_id is not None and not get_user_model().objects.filter(pk=user_id).exists():
        raise serializers.ValidationError(_("No user with id %(id)s.") % {"id": user_id})
    return user_id
