"""`{% presence_switch as presence %}`: the header's presence switch (console.presence)."""

from django import template

from console.presence import switch_for

register = template.Library()


@register.simple_tag(takes_context=True)
def presence_switch(context) -> dict | None:
    request = context.get("request")
    if request is None:
        return None
    return switch_for(request.user)
