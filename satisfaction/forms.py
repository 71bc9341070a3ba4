"""The rating form of the survey page and of the ticket page (console): shape only;
satisfaction.services decides."""

from django import forms
from django.utils.translation import gettext_lazy as _

from .models import COMMENT_MAX

RATING_LABELS = [
    (5, _("5 — Very good")),
    (4, _("4 — Good")),
    (3, _("3 — Fair")),
    (2, _("2 — Poor")),
    (1, _("1 — Very poor")),
]


class RatingForm(forms.Form):
    rating = forms.TypedChoiceField(
        label=_("How satisfied are you with the help?"),
        choices=RATING_LABELS,
        coerce=int,
        widget=forms.RadioSelect,
        error_messages={"required": _("Choose a rating from 1 to 5.")},
    )
    comment = forms.CharField(
        label=_("Anything you want to tell us? (optional)"),
        required=False,
        max_length=COMMENT_MAX,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 4, "maxlength": COMMENT_MAX}),
    )
