"""The attachments API: upload (multipart, field `file`), read, download, thumbnail, remove.
A file the caller may not read is the same 404 as an unknown id."""

from urllib.parse import quote

from django.conf import settings
from django.core.files.storage import default_storage
from django.http import FileResponse
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from config.errors import Forbidden
from config.openapi import errors

from . import selectors, services, types
from .models import Attachment
from .serializers import AttachmentOutput, UploadInput


def _disposition(filename: str, inline: bool) -> str:
    """RFC 6266: an ASCII fallback name, and the real one in UTF-8 (RFC 5987)."""
    fallback = "".join(c if 32 <= ord(c) < 127 and c not in '"\\' else "_" for c in filename)
    kind = "inline" if inline else "attachment"
    return f"{kind}; filename=\"{fallback}\"; filename*=UTF-8''{quote(filename, safe='')}"


def _file_response(key: str, content_type: str, filename: str, inline: bool) -> FileResponse:
    response = FileResponse(default_storage.open(key, "rb"), content_type=content_type)
    response["Content-Disposition"] = _disposition(filename, inline)
    # The bytes are the uploader's: never sniffed into something runnable, never run as a
    # page of ours (no script, no same-origin access) even if opened directly.
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "sandbox"
    response["Cache-Control"] = "private, no-cache"
    return response


class AttachmentViewSet(viewsets.GenericViewSet):
    serializer_class = AttachmentOutput
    lookup_value_converter = "int"
    pagination_class = None
    filter_backends: list = []

    parser_classes = [MultiPartParser]  # (only the upload has a body)

    @extend_schema(
        summary="Upload a file to attach",
        description="Multipart, field `file`. The type is decided from the content; the file "
        "is scanned when a scanner is configured. Attach it within 24 hours with "
        "`attachment_ids` when submitting a ticket or replying; only its uploader may.",
        request={"multipart/form-data": UploadInput},
        responses={
            201: AttachmentOutput,
            **errors(400, 401, 413, 415, 422, 503),
        },
    )
    def create(self, request: Request) -> Response:
        data = UploadInput(data=request.data)
        data.is_valid(raise_exception=True)
        attachment = services.upload(uploader=request.user, file=data.validated_data["file"])
        return Response(AttachmentOutput(attachment).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        summary="Get an attachment", responses={200: AttachmentOutput, **errors(401, 404)}
    )
    def retrieve(self, request: Request, pk=None) -> Response:
        return Response(AttachmentOutput(selectors.readable(request.user, int(pk))).data)

    @extend_schema(
        summary="Remove an attachment",
        description="Staff, and its uploader within 15 minutes of uploading. The file is gone "
        "for everyone; the ticket's history says who removed it.",
        responses={204: None, **errors(401, 403, 404)},
    )
    def destroy(self, request: Request, pk=None) -> Response:
        attachment = selectors.readable(request.user, int(pk))
        if not services.may_remove(request.user, attachment):
            raise Forbidden(
                _("Only staff, or its uploader within %(minutes)d minutes, may remove a file.")
                % {"minutes": settings.ATTACHMENT_REMOVE_MINUTES}
            )
        services.remove(user=request.user, attachment=attachment)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(
        summary="Download an attachment",
        responses={
            (200, "application/octet-stream"): OpenApiResponse(description="The bytes."),
            **errors(401, 404),
        },
    )
    @action(detail=True, methods=["get"])
    def download(self, request: Request, pk=None) -> FileResponse:
        attachment = selectors.readable(request.user, int(pk))
        blob = attachment.blob
        inline = blob.content_type in types.INLINE_TYPES
        return _file_response(blob.key, blob.content_type, attachment.filename, inline)

    @extend_schema(
        summary="An image attachment's thumbnail (PNG)",
        responses={
            (200, "image/png"): OpenApiResponse(description="The thumbnail."),
            **errors(401, 404),
        },
    )
    @action(detail=True, methods=["get"])
    def thumbnail(self, request: Request, pk=None) -> FileResponse:
        attachment = selectors.readable(request.user, int(pk))
        if not attachment.blob.thumbnail:
            raise Attachment.DoesNotExist
        stem = attachment.filename.rsplit(".", 1)[0]
        return _file_response(attachment.blob.thumbnail, "image/png", f"{stem}.png", True)
