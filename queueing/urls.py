from django.urls import path

from .apis import RankQueueApi

urlpatterns = [
    path("rank/", RankQueueApi.as_view(), name="queueing-rank"),
]
