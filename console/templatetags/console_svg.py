"""`{{ value|coord }}`: a number as the SVG templates (templates/console/svg/) write it."""

from django import template

register = template.Library()


@register.filter
def coord(value: float | int) -> str:
    """A position or size in the viewBox's units: a float to a tenth of a unit ("84.0"), an
    integer as it is ("84"). Never localised: SVG reads a dot, whatever the page's language."""
    if isinstance(value, float):
        return f"{value:.1f}"
    return str(value)
