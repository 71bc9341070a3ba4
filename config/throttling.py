"""DRF throttles whose rates come from settings.THROTTLE_RATES when a request is checked (DRF's
own classes read them once, at import), so deployments and tests can change them. A throttled
request is a 429 {"code": "throttled", "detail": ...} with Retry-After (config/exceptions.py).
The counters live in the default cache (Redis), shared by every web process."""

from django.conf import settings
from rest_framework.throttling import AnonRateThrottle, SimpleRateThrottle, UserRateThrottle


class _SettingsRate:
    def get_rate(self):
        return settings.THROTTLE_RATES.get(self.scope)

    def allow_request(self, request, view):
        # The rate is looked up per request (DRF caches it on the instance at __init__).
        self.rate = self.get_rate()
        if self.rate is None:
            return True
        self.num_requests, self.duration = self.parse_rate(self.rate)
        return super().allow_request(request, view)


class AnonThrottle(_SettingsRate, AnonRateThrottle):
    """Anonymous callers, per client address."""


class UserThrottle(_SettingsRate, UserRateThrottle):
    """Authenticated callers, per account (anonymous ones per address)."""


class LoginThrottle(_SettingsRate, SimpleRateThrottle):
    """The token endpoint, per client address: a strict rate of its own."""

    scope = "login"

    def get_cache_key(self, request, view):
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}
