from django import forms
from django.contrib import admin, messages
from django.shortcuts import render
from django.urls import path, reverse
from django.utils import timezone
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from notifications.models import NotifyTemplate
from ticketing.models import Priority

from . import ladder
from .calendars import business_calendar
from .clock import add_business_time
from .deadlines import hours_to_timedelta
from .models import (
    Calendar,
    ClockSegment,
    EscalationLevel,
    Holiday,
    Notify,
    SlaOutcome,
    SlaRule,
    WorkingWindow,
)
from .rules import set_levels
from .selectors import match_rule
from .serializers import EscalationLevelSerializer, level_reference_errors
from .services import sla_recompute


class WorkingWindowInline(admin.TabularInline):
    model = WorkingWindow
    extra = 0


class HolidayInline(admin.TabularInline):
    model = Holiday
    extra = 0


class HolidayImportForm(forms.Form):
    country = forms.CharField(
        label=_("country"), max_length=8, help_text=_("ISO code, e.g. DE, US, CN, GB")
    )
    year = forms.IntegerField(label=_("year"), min_value=1970, max_value=2100)


@admin.register(Calendar)
class CalendarAdmin(admin.ModelAdmin):
    list_display = ["name", "timezone", "holiday_country", "window_count", "holiday_count"]
    search_fields = ["name"]
    inlines = [WorkingWindowInline, HolidayInline]
    actions = ["import_holidays_this_year", "import_holidays_next_year"]

    @admin.display(description=_("windows"))
    def window_count(self, calendar: Calendar) -> int:
        return calendar.windows.count()

    @admin.display(description=_("holidays"))
    def holiday_count(self, calendar: Calendar) -> int:
        return calendar.holidays.count()

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        form.instance.save(update_fields=["updated"])  # windows/holidays changed: new version

    def _import(self, request, queryset, year: int):
        from .services import import_holidays

        for calendar in queryset:
            if not calendar.holiday_country:
                self.message_user(
                    request,
                    gettext("%(calendar)s: set a holiday country first.") % {"calendar": calendar},
                    messages.WARNING,
                )
                continue
            try:
                added = import_holidays(
                    calendar=calendar, country=calendar.holiday_country, year=year
                )
            except ValueError as exc:
                self.message_user(
                    request,
                    gettext("%(calendar)s: %(error)s") % {"calendar": calendar, "error": exc},
                    messages.ERROR,
                )
                continue
            self.message_user(
                request,
                gettext("%(calendar)s: %(count)s holidays imported for %(year)s.")
                % {"calendar": calendar, "count": added, "year": year},
            )

    @admin.action(description=_("Import public holidays (this year)"))
    def import_holidays_this_year(self, request, queryset):
        self._import(request, queryset, timezone.now().year)

    @admin.action(description=_("Import public holidays (next year)"))
    def import_holidays_next_year(self, request, queryset):
        self._import(request, queryset, timezone.now().year + 1)


LEVEL_FIELDS = (
    "position",
    "clock",
    "trigger",
    "value",
    "notify",
    "template_code",
    "reassign_group",
    "raise_priority",
)


def template_choices() -> list[tuple[str, str]]:
    """The notification templates a level may send, by code; empty: the default ones."""
    default = [("", gettext("Default template"))]
    return default + [
        (code, f"{name} ({code})")
        for code, name in NotifyTemplate.objects.order_by("code").values_list("code", "name")
    ]


class EscalationLevelForm(forms.ModelForm):
    """A level by the API's rules (sla/serializers.py): the admin saves no level the API
    would refuse. Who is told are checkboxes and the template a choice, not raw JSON."""

    FIELD_NAMES = {"reassign_group_id": "reassign_group", "non_field_errors": None}

    notify = forms.MultipleChoiceField(
        label=_("notify"),
        choices=Notify.choices,
        required=False,
        widget=forms.CheckboxSelectMultiple,
    )
    template_code = forms.ChoiceField(
        label=_("notification template"), choices=template_choices, required=False
    )

    class Meta:
        model = EscalationLevel
        fields = LEVEL_FIELDS

    def clean(self):
        data = super().clean()
        if self.errors or data.get("DELETE"):
            return data
        group = data.get("reassign_group")
        level = EscalationLevelSerializer(
            data={
                "clock": data.get("clock"),
                "trigger": data.get("trigger"),
                "value": data.get("value"),
                "notify": data.get("notify") if data.get("notify") is not None else [],
                "template_code": data.get("template_code") or "",
                "reassign_group_id": group.pk if group else None,
                "raise_priority": bool(data.get("raise_priority")),
            }
        )
        if level.is_valid():
            problems = level_reference_errors({0: dict(level.validated_data)}).get(0, {})
        else:
            problems = level.errors
        for field, found in problems.items():
            name = self.FIELD_NAMES.get(field, field)
            self.add_error(name if name in self.fields else None, list(found))
        return data


class EscalationLevelInline(admin.TabularInline):
    """The rule's escalation ladder, in position order. A rule saved without levels gets the
    default ladder; an edited ladder is renumbered 1..n in position order."""

    model = EscalationLevel
    form = EscalationLevelForm
    extra = 0
    ordering = ["position"]
    fields = LEVEL_FIELDS


class RuleTestForm(forms.Form):
    priority = forms.ChoiceField(label=_("priority"), choices=Priority.choices)
    category = forms.CharField(label=_("category"), max_length=50, required=False)
    submitted = forms.DateTimeField(
        label=_("submitted"),
        required=False,
        help_text=_("Default: now. Format: 2026-01-05 09:30 (server timezone)."),
    )


@admin.register(SlaRule)
class SlaRuleAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "sort",
        "priority",
        "category",
        "response_hours",
        "resolve_hours",
        "warn_before_minutes",
        "calendar",
        "status",
    ]
    list_editable = ["sort", "status"]
    list_display_links = ["name"]
    list_filter = ["status", "priority", "calendar"]
    search_fields = ["name", "category"]
    inlines = [EscalationLevelInline]
    actions = ["recompute_open_tickets", "recompute_dry_run"]
    change_list_template = "admin/sla/slarule/change_list.html"

    def get_urls(self):
        return [
            path("test/", self.admin_site.admin_view(self.test_view), name="sla_slarule_test"),
            *super().get_urls(),
        ]

    def test_view(self, request):
        """ "Test this rule": which rule matches a ticket, and its deadlines."""
        form = RuleTestForm(request.GET or None)
        outcome = None
        if form.is_valid():
            submitted = form.cleaned_data["submitted"] or timezone.now()
            rule = match_rule(
                priority=int(form.cleaned_data["priority"]),
                category=form.cleaned_data["category"] or "",
            )
            outcome = {"rule": rule, "submitted": submitted}
            if rule is not None:
                calendar = business_calendar(rule.calendar)
                for clock, hours in (
                    ("response", rule.response_hours),
                    ("resolve", rule.resolve_hours),
                ):
                    budget = hours_to_timedelta(hours)
                    outcome[clock] = (
                        add_business_time(submitted, budget, calendar) if budget else None
                    )
        context = {
            **self.admin_site.each_context(request),
            "form": form,
            "outcome": outcome,
            "title": gettext("Test SLA rule matching"),
            "opts": self.model._meta,
        }
        return render(request, "admin/sla/slarule/test.html", context)

    def changelist_view(self, request, extra_context=None):
        extra_context = {**(extra_context or {}), "test_url": reverse("admin:sla_slarule_test")}
        return super().changelist_view(request, extra_context)

    def save_formset(self, request, form, formset, change):
        """An edited ladder is saved whole through set_levels (positions renumbered 1..n in
        position order), so swapping two positions never trips their uniqueness, and levels
        entered with a new rule replace the default ladder it got when saved."""
        if formset.model is not EscalationLevel:
            return super().save_formset(request, form, formset, change)
        if not any(f.has_changed() for f in formset.forms) and not formset.deleted_forms:
            # Untouched: keep the ladder (a new rule's default one included).
            return super().save_formset(request, form, formset, change)
        previous = list(form.instance.levels.order_by("position"))
        deleted = set(formset.deleted_forms)
        kept = [
            f.instance
            for f in formset.forms
            if f not in deleted and (f.instance.pk is not None or f.has_changed())
        ]
        kept.sort(key=lambda level: level.position)
        set_levels(
            form.instance,
            [
                ladder.Level(
                    position=level.position,
                    clock=level.clock,
                    trigger=level.trigger,
                    value=level.value,
                    notify=tuple(level.notify or ()),
                    template_code=level.template_code,
                    reassign_group_id=level.reassign_group_id,
                    raise_priority=level.raise_priority,
                )
                for level in kept
            ],
        )
        # What the admin's history records: the ladder's rows were replaced.
        formset.deleted_objects = previous
        formset.changed_objects = []
        formset.new_objects = list(form.instance.levels.order_by("position"))
        return None

    @admin.action(description=_("Recompute deadlines of all open tickets"))
    def recompute_open_tickets(self, request, queryset):
        result = sla_recompute()
        self.message_user(
            request,
            gettext(
                "Recomputed %(examined)s open tickets: %(moved)s moved, "
                "%(breached)s newly breaching."
            )
            % {
                "examined": result.examined,
                "moved": result.moved,
                "breached": result.newly_breached,
            },
        )

    @admin.action(description=_("Recompute deadlines of all open tickets (dry run)"))
    def recompute_dry_run(self, request, queryset):
        result = sla_recompute(dry_run=True)
        self.message_user(
            request,
            gettext(
                "Dry run over %(examined)s open tickets: %(moved)s would move, "
                "%(breached)s would newly breach. Nothing was written."
            )
            % {
                "examined": result.examined,
                "moved": result.moved,
                "breached": result.newly_breached,
            },
        )


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(SlaOutcome)
class SlaOutcomeAdmin(ReadOnlyAdmin):
    list_display = [
        "ticket",
        "rule",
        "response_minutes",
        "response_met",
        "resolve_minutes",
        "resolve_met",
        "completed_time",
    ]
    list_filter = ["response_met", "resolve_met", "rule"]
    search_fields = ["ticket__bill_code"]
    list_select_related = ["ticket", "rule"]


@admin.register(ClockSegment)
class ClockSegmentAdmin(ReadOnlyAdmin):
    list_display = ["ticket", "clock", "kind", "at", "actor"]
    list_filter = ["clock", "kind"]
    search_fields = ["ticket__bill_code"]
    list_select_related = ["ticket", "actor"]
