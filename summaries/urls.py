from django.urls import path

from . import views

app_name = "summaries"

urlpatterns = [
    path("", views.HomeView.as_view(), name="home"),
    path("videos/<slug:slug>/", views.SummaryDetailView.as_view(), name="summary-detail"),
    path("preview/<slug:slug>/", views.SummaryPreviewView.as_view(), name="summary-preview"),
]
