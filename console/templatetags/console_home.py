"""`{% home_links as links %}`: the header's role switch (console.roles.home_links)."""

from django import template

from console.roles import home_links as _home_links

register = template.Library()


@register.simple_tag(takes_context=True)
def home_links(context) -> list[dict]:
    request = context.get("request")
    if request is None or not request.user.is_authenticated:
        return []
    return _home_links(request)
