from rest_framework import serializers

from .models import Notification


class NotificationOutput(serializers.ModelSerializer):
    is_read = serializers.BooleanField(read_only=True)
    ticket_id = serializers.IntegerField(read_only=True, allow_null=True)

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
        ]
        read_only_fields = fields


class InboxQuery(serializers.Serializer):
    unread = serializers.BooleanField(required=False, default=False)


class UnreadCountOutput(serializers.Serializer):
    unread = serializers.IntegerField()


class ReadAllOutput(serializers.Serializer):
    marked = serializers.IntegerField()
