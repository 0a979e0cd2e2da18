"""Admin addresses with an id that is not one (a relative link resolved against a change page,
a typo, a probe) are a redirect or a 404 on every model's pages, never a 500."""

import pytest
from django.contrib import admin
from django.contrib.auth.models import User

ODD_IDS = ["widgets.css", "%20", "99999999999999999999999"]


def admin_pages():
    for model in admin.site._registry:
        base = f"/admin/{model._meta.app_label}/{model._meta.model_name}"
        for odd in ODD_IDS:
            for page in ("change", "history", "delete"):
                yield f"{base}/{odd}/{page}/"


@pytest.mark.django_db
def test_an_odd_id_is_never_a_server_error_on_any_admin_page(client):
    client.force_login(User.objects.create_superuser("root", "root@example.com", "pw"))
    client.raise_request_exception = False  # collect every page's answer
    failures = []
    for url in admin_pages():
        status = client.get(url).status_code  # a redirect goes to the admin's index
        if status >= 500:
            failures.append((url, status))
    assert failures == [], "\n".join(f"{url} {status}" for url, status in failures)
