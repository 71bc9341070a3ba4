"""Delivery channels: a registry keyed by channel code, one small class per channel."""

from . import email, in_app, webhook  # noqa: F401  (register the channels)
from .base import Channel, PermanentDeliveryError, TransientDeliveryError
from .registry import channel_choices, get_channel

__all__ = [
    "Channel",
    "PermanentDeliveryError",
    "TransientDeliveryError",
    "channel_choices",
    "get_channel",
]
