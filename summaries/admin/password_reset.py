"""Password reset from the admin login page ("Forgot your password?"), rate-limited.

Django's own views and templates (the admin's registration/ templates show the link once
a URL named admin_password_reset exists). The request page never tells whether an
address belongs to anyone: every valid form gets the same "check your e-mail" page, and
the e-mail is sent by a worker (summaries.notifications.password_reset), so the answer
takes as long whether or not there is someone to write to; its link is on SITE_URL.
Requests are limited per client address and per e-mail address asked for (PASSWORD_RESET_RATE_IP,
PASSWORD_RESET_RATE_EMAIL; summaries.ops.ratelimits); past either the form answers 429,
counting alike for known and unknown addresses.
"""

from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.http import HttpResponseRedirect
from django.urls import path

from summaries.background import queue_after_commit
from summaries.ops import ratelimits

RESET_TASK = "summaries.tasks.send_password_reset"
TOO_MANY = "Too many password reset requests. Please try again later."


def asked_address(request) -> str:
    return request.POST.get("email", "").strip().lower()[:254]


class PasswordResetView(auth_views.PasswordResetView):
    def post(self, request, *args, **kwargs):
        if ratelimits.limited(
            request,
            group="password-reset",
            client_rate=settings.PASSWORD_RESET_RATE_IP,
            address=asked_address(request),
            address_rate=settings.PASSWORD_RESET_RATE_EMAIL,
        ):
            form = self.get_form()
            form.is_valid()
            form.add_error("email", TOO_MANY)
            return self.render_to_response(self.get_context_data(form=form), status=429)
        return super().post(request, *args, **kwargs)

    def form_valid(self, form):
        # The link in the mail goes to SITE_URL, never to the Host (or port) the request
        # named: whoever asks for a reset must not choose where its token is sent.
        site = urlsplit(settings.SITE_URL)
        secure = site.scheme == "https"
        queue_after_commit(RESET_TASK, form.cleaned_data["email"], site.netloc, secure)
        return HttpResponseRedirect(self.get_success_url())


# Before admin.site.urls in curation/urls.py, under admin/.
urlpatterns = [
    path("password_reset/", PasswordResetView.as_view(), name="admin_password_reset"),
    path(
        "password_reset/done/",
        auth_views.PasswordResetDoneView.as_view(),
        name="password_reset_done",
    ),
    path(
        "reset/<uidb64>/<token>/",
        auth_views.PasswordResetConfirmView.as_view(),
        name="password_reset_confirm",
    ),
    path(
        "reset/done/",
        auth_views.PasswordResetCompleteView.as_view(),
        name="password_reset_complete",
    ),
]
