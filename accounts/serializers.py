from django.utils.translation import gettext_lazy as _
from rest_framework import serializers


class TokenRequest(serializers.Serializer):
    username = serializers.CharField(max_length=150, trim_whitespace=False)
    password = serializers.CharField(
        max_length=4096, trim_whitespace=False, style={"input_type": "password"}
    )


class TokenResponse(serializers.Serializer):
    token = serializers.CharField(help_text=_("Send as `Authorization: Token <token>`."))
    expiry = serializers.DateTimeField(help_text=_("When the token stops working (ISO-8601)."))
