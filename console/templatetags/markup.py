"""`{{ body|markdown }}`: a reply's or a ticket's text as the sanitised HTML every reader
gets (notifications.markup: the same function renders the e-mail about a reply)."""

from django import template
from django.utils.safestring import SafeString, mark_safe

from notifications.markup import render_markdown

register = template.Library()


@register.filter(name="markdown")
def markdown_filter(text: str) -> SafeString:
    # Sanitised by nh3 in render_markdown: nothing unsafe is left to escape.
    return mark_safe(render_markdown(text))  # noqa: S308
