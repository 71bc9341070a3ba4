"""Token login, logout and logout-all. The token endpoint takes JSON only, is throttled per
client address (THROTTLE_RATES["login"]) and subject to the lock-out after failed passwords."""

from django.contrib.auth import authenticate
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiResponse, extend_schema
from knox.views import LoginView as KnoxLoginView
from knox.views import LogoutAllView as KnoxLogoutAllView
from knox.views import LogoutView as KnoxLogoutView
from rest_framework import exceptions
from rest_framework.permissions import AllowAny

from config.openapi import DetailErrorBody, errors
from config.parsers import SafeJSONParser
from config.throttling import LoginThrottle

from .auth import TokenAuthentication, delete_expired_tokens
from .serializers import TokenRequest, TokenResponse

LOCKED_OUT = OpenApiResponse(
    DetailErrorBody,
    description="Too many requests from this address, or too many failed passwords for this "
    'username ("code": "throttled" or "locked_out"); Retry-After says when to try again.',
)


class TokenLoginView(KnoxLoginView):
    """POST {username, password} → {"token", "expiry"}."""

    authentication_classes: list = []
    permission_classes = [AllowAny]
    parser_classes = [SafeJSONParser]
    throttle_classes = [LoginThrottle]

    @extend_schema(
        operation_id="auth_token_create",
        summary="Log in: a new API token",
        request={"application/json": TokenRequest},
        responses={200: TokenResponse, **errors(400), 429: LOCKED_OUT},
        auth=[],
    )
    def post(self, request, format=None):
        data = TokenRequest(data=request.data)
        data.is_valid(raise_exception=True)
        # The Django request, so that django-axes counts the failure and marks a lock-out on
        # the request its middleware answers.
        user = authenticate(
            request._request,
            username=data.validated_data["username"],
            password=data.validated_data["password"],
        )
        if user is None:
            raise exceptions.ValidationError(
                {"non_field_errors": [_("Unable to log in with the given username and password.")]}
            )
        request.user = user
        delete_expired_tokens(user_id=user.pk)
        return super().post(request, format=format)


class LogoutView(KnoxLogoutView):
    """Revokes the token this request presents."""

    authentication_classes = [TokenAuthentication]

    @extend_schema(
        operation_id="auth_logout",
        summary="Log out: revoke this token",
        request=None,
        responses={204: None, **errors(401)},
    )
    def post(self, request, format=None):
        return super().post(request, format=format)


class LogoutAllView(KnoxLogoutAllView):
    """Revokes every token of the caller's account."""

    authentication_classes = [TokenAuthentication]

    @extend_schema(
        operation_id="auth_logout_all",
        summary="Log out everywhere: revoke all my tokens",
        request=None,
        responses={204: None, **errors(401)},
    )
    def post(self, request, format=None):
        return super().post(request, format=format)
