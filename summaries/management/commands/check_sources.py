"""Check cited sources in the foreground, through the same code path as the workers."""

import json
import sys
from collections import Counter
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from summaries import checking, linkcheck
from summaries.models import Citation, Source, Summary

# When a source's citations disagree, the verdict reported for the URL is the worst one.
VERDICT_ORDER = ["not_found", "changed", "unavailable", "supported"]


class Progress:
    """A one-line progress bar on stderr (a line per result when stderr is not a terminal)."""

    WIDTH = 30

    def __init__(self, stream, total: int, enabled: bool = True) -> None:
        self.stream, self.total, self.done, self.enabled = stream, total, 0, enabled
        self.tty = hasattr(stream, "isatty") and stream.isatty()

    def step(self, url: str, state: str) -> None:
        self.done += 1
        if not self.enabled:
            return
        filled = self.WIDTH * self.done // max(self.total, 1)
        bar = "#" * filled + "-" * (self.WIDTH - filled)
        line = f"[{bar}] {self.done}/{self.total} {state:<12} {url}"
        if self.tty:
            self.stream.write("\r" + line[:160].ljust(160))
            if self.done == self.total:
                self.stream.write("\n")
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


def _entry(result: linkcheck.CheckResult, claim: str | None) -> dict:
    return {
        "state": str(result.state),
        "status": result.status,
        "final_url": result.final_url,
        "title": result.title,
        "description": result.description,
        "error_class": str(result.error_class) if result.error_class else None,
        "claim": claim,
    }


def url_verdict(result: linkcheck.CheckResult, phrase: str | None) -> str | None:
    """The claim verdict of an ad-hoc URL (no confirmed fingerprint to compare with)."""
    if not phrase or not linkcheck.normalise_phrase(phrase):
        return None
    if result.state not in checking.READABLE_STATES or result.text is None:
        return "unavailable"
    return linkcheck.verdict(result.text, phrase, None, None)


class Command(BaseCommand):
    # A foreground check starts checking at once: the system checks are `manage.py check`'s
    # (run by `make lint` and before every deployment), not a link check's start-up.
    requires_system_checks: list[str] = []
    help = (
        "Check cited sources now, in the foreground (the workers' code path): every source "
        "(--all), one summary's (--summary SLUG), or a list of URLs (--urls FILE, optionally "
        "with --claims FILE, a JSON object url -> phrase). --json OUT writes the results."
    )

    def add_arguments(self, parser):
        mode = parser.add_mutually_exclusive_group(required=True)
        mode.add_argument("--all", action="store_true", help="Every source not ignored.")
        mode.add_argument("--summary", metavar="SLUG", help="The sources of one summary.")
        mode.add_argument("--urls", metavar="FILE", help="One URL per line (not stored).")
        parser.add_argument("--claims", metavar="FILE", help="JSON: url -> phrase (--urls).")
        parser.add_argument("--json", metavar="OUT", help="Write {url: result} as JSON here.")
        parser.add_argument("--no-progress", action="store_true", help="No progress output.")

    def handle(self, *args, **options):
        if options["claims"] and not options["urls"]:
            raise CommandError("--claims goes with --urls.")
        self.progress_enabled = not options["no_progress"]
        if options["urls"]:
            report = self._check_urls(options["urls"], options["claims"])
        else:
            if options["summary"]:
                summary = Summary.objects.filter(video__slug=options["summary"]).first()
                if summary is None:
                    raise CommandError(f"No summary with the slug {options['summary']!r}.")
                queryset = Source.objects.filter(
                    pk__in=Source.objects.filter(citations__summary=summary).values("pk")
                )
            else:
                queryset = Source.objects.all()
            report = self._check_sources(queryset)
        counts = Counter(entry["state"] for entry in report.values())
        summary_line = ", ".join(f"{state}: {n}" for state, n in sorted(counts.items()))
        self.stdout.write(f"Checked {len(report)} URL(s). {summary_line}")
        if options["json"]:
            Path(options["json"]).write_text(json.dumps(report, indent=2, ensure_ascii=False))
            self.stdout.write(f"Results written to {options['json']}.")

    # --- Ad-hoc URLs --------------------------------------------------------------------

    def _check_urls(self, urls_path: str, claims_path: str | None) -> dict:
        try:
            lines = Path(urls_path).read_text().splitlines()
            claims = json.loads(Path(claims_path).read_text()) if claims_path else {}
        except (OSError, ValueError) as error:
            raise CommandError(f"Cannot read the input: {error}") from error
        if not isinstance(claims, dict):
            raise CommandError("--claims must hold a JSON object: url -> phrase.")
        urls = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
        urls = list(dict.fromkeys(urls))
        progress = Progress(sys.stderr, len(urls), self.progress_enabled)
        needs = {url: bool(claims.get(url)) for url in urls}
        results = checking.run_checks(
            needs, on_result=lambda url, result: progress.step(url, str(result.state))
        )
        return {
            url: _entry(results[url], url_verdict(results[url], claims.get(url))) for url in urls
        }

    # --- Stored sources -----------------------------------------------------------------

    def _check_sources(self, queryset) -> dict:
        total = queryset.filter(ignored=False).count()
        progress = Progress(sys.stderr, total, self.progress_enabled)
        results: dict[int, linkcheck.CheckResult] = {}

        def on_result(source, result):
            results[source.pk] = result
            progress.step(source.url, str(result.state))

        while True:
            token, ids = checking.claim_sources(
                queryset=queryset.exclude(pk__in=list(results)),
                limit=checking.dispatch.batch_size(),
            )
            if not ids:
                break
            checking.check_source_batch(source_ids=ids, token=token, on_result=on_result)
        busy = total - len(results)
        if busy:
            self.stderr.write(f"{busy} source(s) were being checked by a worker; skipped.")
        return self._source_report(results)

    @staticmethod
    def _source_report(results: dict[int, linkcheck.CheckResult]) -> dict:
        verdicts: dict[int, set[str]] = {}
        for source_id, verdict in Citation.objects.filter(source_id__in=list(results)).values_list(
            "source_id", "verdict"
        ):
            verdicts.setdefault(source_id, set()).add(verdict)
        report = {}
        urls = dict(Source.objects.filter(pk__in=list(results)).values_list("pk", "url"))
        for source_id, result in results.items():
            found = [v for v in VERDICT_ORDER if v in verdicts.get(source_id, set())]
            report[urls[source_id]] = _entry(result, found[0] if found else None)
        return report
