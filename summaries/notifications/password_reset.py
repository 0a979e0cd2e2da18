"""Sending a password reset link (a worker's half of the admin's "Forgot your password?")."""

from django.contrib.auth.forms import PasswordResetForm


def send_password_reset(*, email: str, domain: str, use_https: bool) -> None:
    """E-mail a reset link, valid PASSWORD_RESET_TIMEOUT seconds, to every active user with
    this address and a usable password (Django's PasswordResetForm rules); send nothing,
    and say nothing, when there is none. `domain` is the host the request came to."""
    form = PasswordResetForm({"email": email})
    if form.is_valid():
        form.save(domain_override=domain, use_https=use_https)
