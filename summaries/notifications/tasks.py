"""The notification tasks: thin, by id, each calling one service (summaries.tasks imports
them)."""

from django.conf import settings

from summaries.background import TRANSIENT_ERRORS, background_task

from .email import TransientEmailError


@background_task(
    name="summaries.tasks.send_notification_email",
    soft_time_limit=int(settings.EMAIL_TIMEOUT or 60) + 30,
    # The service counts attempts (NOTIFICATION_EMAIL_MAX_ATTEMPTS); past Celery's three
    # retries, an e-mail still pending is queued again by the sweeper.
    autoretry_for=(*TRANSIENT_ERRORS, TransientEmailError),
)
def send_notification_email(notification_id: int) -> None:
    """E-mail one notification, at most once (a second run sends nothing); a mail server
    that could not be reached, or answered 4xx, is tried again with backoff."""
    from . import email

    email.send_email(notification_id=notification_id)


@background_task(name="summaries.tasks.sweep_notifications", soft_time_limit=120)
def sweep_notifications() -> None:
    """Tell of scheduled summaries gone live, queue lost e-mails, mark interrupted ones,
    drop old events (celery beat, every minute). Idempotent."""
    from . import email

    email.sweep()


@background_task(name="summaries.tasks.send_password_reset", soft_time_limit=60)
def send_password_reset(email: str, domain: str, use_https: bool) -> None:
    """E-mail a password reset link to the users with this address, if any."""
    from . import password_reset

    password_reset.send_password_reset(email=email, domain=domain, use_https=use_https)
