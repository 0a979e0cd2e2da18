"""Webhooks: events told to the endpoints clients register.

- `events`: what happened, written with the change itself (an outbox row per event and a
  delivery row per subscribed endpoint), for live summaries only;
- `delivery`: one signed attempt per call through the fetcher's address rules, retries
  with backoff, the delivery log, disabling endpoints that keep failing, the sweeper;
- `endpoints`: what owners do besides editing: a test event, a redelivery, a new secret;
- `signing`: Standard Webhooks headers (HMAC-SHA256 over id, timestamp and body; two
  signatures while a rotated secret's overlap lasts);
- `tasks`: the thin Celery tasks.
"""
