"""The follow tasks: thin, by id, each calling one service (summaries.tasks imports them)."""

from django.conf import settings

from summaries.background import TRANSIENT_ERRORS, background_task

from .mail import TransientMailError


@background_task(
    name="summaries.tasks.send_follow_confirmation",
    soft_time_limit=int(settings.EMAIL_TIMEOUT or 60) + 30,
    autoretry_for=(*TRANSIENT_ERRORS, TransientMailError),
)
def send_follow_confirmation(subscriber_id: int) -> None:
    """E-mail an address its confirmation link, at most once per sign-up that queued one."""
    from . import signup

    signup.send_confirmation(subscriber_id=subscriber_id)


@background_task(
    name="summaries.tasks.send_digests",
    # 10,000 digests take about a minute to a local relay (bench/README.md). A run may
    # outlast the beat interval: the next one skips what this one claimed (row locks).
    soft_time_limit=900,
    autoretry_for=(*TRANSIENT_ERRORS, TransientMailError),
)
def send_digests() -> None:
    """Send the digests due now (celery beat, every FOLLOW_DIGEST_EVERY seconds); each at
    most once per address, frequency and period, however often or concurrently it runs."""
    from . import digests

    digests.send_digests()


@background_task(name="summaries.tasks.forget_unfollowed_addresses", soft_time_limit=300)
def forget_unfollowed_addresses() -> None:
    """Delete the addresses that have followed nothing for FOLLOW_FORGET_AFTER seconds
    (celery beat, hourly)."""
    from . import signup

    signup.forget_unfollowed()
