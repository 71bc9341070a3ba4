from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from .models import Attachment


class AttachmentOutput(serializers.ModelSerializer):
    size = serializers.IntegerField(source="blob.size", read_only=True)
    content_type = serializers.CharField(source="blob.content_type", read_only=True)
    sha256 = serializers.CharField(source="blob.sha256", read_only=True)
    download_url = serializers.SerializerMethodField()
    thumbnail_url = serializers.SerializerMethodField(
        help_text="A PNG preview of a raster image once a worker made it; null otherwise."
    )
    ticket_id = serializers.IntegerField(read_only=True, allow_null=True)
    reply_id = serializers.IntegerField(read_only=True, allow_null=True)

    class Meta:
        model = Attachment
        fields = [
            "id",
            "filename",
            "size",
            "content_type",
            "sha256",
            "download_url",
            "thumbnail_url",
            "ticket_id",
            "reply_id",
            "uploaded",
        ]
        read_only_fields = fields

    def get_download_url(self, attachment: Attachment) -> str:
        return reverse("attachment-download", args=[attachment.pk])

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_thumbnail_url(self, attachment: Attachment) -> str | None:
        if not attachment.blob.thumbnail:
            return None
        return reverse("attachment-thumbnail", args=[attachment.pk])


class UploadInput(serializers.Serializer):
    file = serializers.FileField(allow_empty_file=False, use_url=False)
