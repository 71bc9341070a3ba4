from rest_framework import serializers

from .models import Notification, OutboxDelivery


class DeliveryOutput(serializers.ModelSerializer):
    class Meta:
        model = OutboxDelivery
        fields = ["channel", "status", "attempts", "next_attempt_at", "sent_at", "last_error"]
        read_only_fields = fields


class NotificationOutput(serializers.ModelSerializer):
    is_read = serializers.BooleanField(read_only=True)
    ticket_id = serializers.IntegerField(read_only=True, allow_null=True)
    deliveries = DeliveryOutput(many=True, read_only=True)

    class Meta:
        model = Notification
        fields = [
            "id",
            "template_code",
            "title",
            "content",
            "params",
            "ticket_id",
            "created",
            "read_at",
            "is_read",
            "deliveries",
        ]
        read_only_fields = fields


class InboxQuery(serializers.Serializer):
    unread = serializers.BooleanField(required=False, default=False)


class UnreadCountOutput(serializers.Serializer):
    unread = serializers.IntegerField()
    count = serializers.IntegerField(help_text="The same number, for clients that say count.")


class ReadAllOutput(serializers.Serializer):
    marked = serializers.IntegerField()
