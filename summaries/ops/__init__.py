"""Operations: what operators and orchestrators ask of the running site.

Health and readiness probes (`views.py`, `checks.py`, `middleware.py`), the 503 answered
while a backing service is down (`outage.py`), metrics, request logs, and the rate limits
of forms anyone may post (`ratelimits.py`).
"""
