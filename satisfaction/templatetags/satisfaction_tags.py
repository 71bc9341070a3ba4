from django import template

from satisfaction.models import RATING_MAX

register = template.Library()


@register.filter
def stars(rating: int | None) -> str:
    """A rating as five stars, filled up to it ("★★★★☆" for 4); "" without one. Pictures the
    number beside it: the text says it too, for screen readers."""
    if rating is None:
        return ""
    return "★" * rating + "☆" * (RATING_MAX - rating)
