"""Checking cited sources: claiming due sources, recording results, claim verdicts.

The network side lives in `summaries.linkcheck` (no ORM); `dispatch` decides which sources
are checked when, `record` checks them and writes what was found, `limiter` shares the
per-host limit between processes, `tasks` are the Celery tasks. The flow:

1. `queue_checks_for_summary` (after a save), `request_checks` (admin "check now") and
   `dispatch_due_checks` (celery beat, also the sweeper) *claim* sources: each claimed
   source gets the batch's token and a lease (`claimed_until`), in one conditional UPDATE,
   so two racing saves or a duplicate beat tick never claim a source twice. The batch is
   then queued with `delay_on_commit`. A save inserts the sources it is the first to cite
   already claimed (`claims_for_new_sources`, `queue_new_sources`): no UPDATE after.
2. `check_source_batch` (the worker task and `check_sources` command) fetches the claimed
   sources through `run_checks` and `record_results` writes the results in bulk: the latest
   result on the Source, one SourceCheck history row per source and batch token (a batch
   redone after a lost worker writes no second row), and a verdict per citation.
3. A batch that is lost (broker down at save time, a worker killed) leaves its sources
   claimed; once the lease lapses the sweeper claims them again.
"""

from .dispatch import (
    NewSourceClaims,
    claim_sources,
    claims_for_new_sources,
    dispatch_due_checks,
    extend_claim,
    ignore_source,
    queue_checks_for_summary,
    queue_new_sources,
    request_checks,
    request_summary_checks,
    sweep_sources,
)
from .record import (
    READABLE_STATES,
    BatchOutcome,
    check_source_batch,
    confirm_citation,
    give_up_batch,
    record_results,
    run_checks,
)

__all__ = [
    "READABLE_STATES",
    "BatchOutcome",
    "NewSourceClaims",
    "check_source_batch",
    "claim_sources",
    "claims_for_new_sources",
    "confirm_citation",
    "dispatch_due_checks",
    "extend_claim",
    "give_up_batch",
    "ignore_source",
    "queue_checks_for_summary",
    "queue_new_sources",
    "record_results",
    "request_checks",
    "request_summary_checks",
    "run_checks",
    "sweep_sources",
]
