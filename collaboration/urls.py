"""The collaboration API, under /api/ (before the router's ticket routes)."""


urlpatterns: list = [
    # watchers
    # links
    # merging
]
