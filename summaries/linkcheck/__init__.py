"""Talking to the outside world: checking cited sources. No ORM in here.

- `policy`: which URLs and addresses may be contacted (SSRF rules);
- `fetch`: one URL, safely (redirects, retries, caps) into a `result.CheckResult`;
- `transport`: resolving and vetting a name's addresses, and connections pinned to one of
  them, ended by a watchdog at the deadline (the fetch's and the webhook sender's);
- `page`: title, description, main text, fingerprint and bot-wall detection of a fetched
  page (`pdf`: the title and text of a PDF);
- `claims`: whether the page still carries the cited phrase;
- `limits` and `batch`: many URLs at once with global and per-host limits;
- `deliver`: one POST (a webhook delivery) under the same address rules.
"""

from .batch import check_many
from .claims import Verdict, claim_verdict, find_phrase, normalise_phrase, verdict
from .fetch import DEFAULT_USER_AGENT, fetch, parse_retry_after
from .limits import HostLimiter, InProcessHostLimiter
from .page import fingerprint_text, read_page
from .policy import (
    AllowList,
    Blocked,
    allow_list,
    check_url,
    parse_networks,
    parse_target,
    vet_address,
    vet_port,
)
from .result import CheckResult, ErrorClass, State
from .transport import Resolver, default_resolver

__all__ = [
    "DEFAULT_USER_AGENT",
    "Blocked",
    "CheckResult",
    "ErrorClass",
    "HostLimiter",
    "InProcessHostLimiter",
    "Resolver",
    "State",
    "Verdict",
    "check_many",
    "check_url",
    "claim_verdict",
    "default_resolver",
    "fetch",
    "find_phrase",
    "fingerprint_text",
    "normalise_phrase",
    "parse_networks",
    "AllowList",
    "allow_list",
    "parse_retry_after",
    "parse_target",
    "read_page",
    "verdict",
    "vet_address",
    "vet_port",
]
