from django.urls import path

from .apis import SearchView

urlpatterns = [path("", SearchView.as_view(), name="search")]
