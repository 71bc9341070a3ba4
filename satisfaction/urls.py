"""The satisfaction API, under /api/ (before the router's ticket routes)."""


urlpatterns: list = []
