"""No views: the bare stack answers static files only (bench/bare_settings.py)."""

urlpatterns: list = []
