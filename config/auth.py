from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.authtoken.views import ObtainAuthToken

from config.openapi import errors


class ObtainTokenView(ObtainAuthToken):
    """POST {username, password} → {"token": ...}; send it as `Authorization: Token <token>`."""

    @extend_schema(
        request=inline_serializer(
            name="TokenRequest",
            fields={"username": serializers.CharField(), "password": serializers.CharField()},
        ),
        responses={
            200: inline_serializer(name="TokenResponse", fields={"token": serializers.CharField()}),
            **errors(400),
        },
        auth=[],
    )
    def post(self, request, *args, **kwargs):
        return super().post(request, *args, **kwargs)
