from django.urls import path

from . import views

app_name = "inbox"

urlpatterns = [
    path("", views.inbox, name="list"),
    path("<int:notification_id>/read/", views.mark_read, name="read"),
    path("read-all/", views.mark_all_read, name="read-all"),
]
