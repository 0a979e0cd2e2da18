from django.urls import path

from . import views

app_name = "summaries"

urlpatterns = [
    path("", views.HomeView.as_view(), name="home"),
    path("search/", views.SearchView.as_view(), name="search"),
    path("videos/<slug:slug>/", views.SummaryDetailView.as_view(), name="summary-detail"),
    path("preview/<slug:slug>/", views.SummaryPreviewView.as_view(), name="summary-preview"),
    path("channels/<slug:slug>/", views.ChannelDetailView.as_view(), name="channel-detail"),
    path("people/<slug:slug>/", views.PersonDetailView.as_view(), name="person-detail"),
    path("topics/<slug:slug>/", views.TopicDetailView.as_view(), name="topic-detail"),
]
