from django.contrib import admin

from .models import Profile


@admin.register(Profile)
class ProfileAdmin(admin.ModelAdmin):
    list_display = ["user", "time_zone", "language"]
    search_fields = ["user__username"]
    list_filter = ["language"]
    autocomplete_fields = ["user"]
