"""Web archive copies of cited pages, verified before readers see them.

- `captures`: asking the archive (Save Page Now 2 by default) to capture cited pages whose
  claim a check found, paced (`pace`: at most ARCHIVE_CAPTURE_RATE requests, paused when
  the archive pushes back), never for opted-out hosts or non-public addresses; the copy's
  address is recorded only when the archive names one.
- `copies`: after each recorded batch of checks, citations whose page died or lost its
  claim are given an archived copy that was fetched and found to be the page as it was
  cited (`matching`: the cited evidence's payload digest, or the passage recorded around
  the key phrase; the closest capture to the citation first; never an error or redirect
  page); the copy is withdrawn when the live page recovers. Readers see "Archived copy,
  <date>".
- `events`: the `citation.archived_copy_changed` webhook; `tasks`: the Celery tasks.

All network I/O goes through `summaries.linkcheck.archive` (the address-safe fetcher).
"""
