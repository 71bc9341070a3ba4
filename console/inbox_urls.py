from django.urls import path

from .views import inbox

app_name = "inbox"

urlpatterns = [
    path("", inbox.inbox, name="list"),
    path("<int:notification_id>/read/", inbox.mark_read, name="read"),
    path("read-all/", inbox.mark_all_read, name="read-all"),
]
