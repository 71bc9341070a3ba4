"""The survey page, mounted at /survey/ (config.urls): answered from the e-mail's or the
inbox's link without signing in."""

from django.urls import path

from .views import survey_page

urlpatterns = [
    path("<str:token>/", survey_page, name="survey-page"),
]
