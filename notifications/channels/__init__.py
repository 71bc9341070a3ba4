"""Delivery channels: a registry keyed by channel code, one small class per channel (each
module registers itself; notifications/apps.py loads them)."""

from .base import Channel, PermanentDeliveryError, TransientDeliveryError
from .registry import channel_choices, get_channel

__all__ = [
    "Channel",
    "PermanentDeliveryError",
    "TransientDeliveryError",
    "channel_choices",
    "get_channel",
]
