"""Start-up with a bad environment fails with one line; production settings pass --deploy."""

import os
import re
import secrets
import subprocess
import sys

import pytest
from django.conf import settings

# Variables settings.py reads that would change the outcome (each case sets its own), and
# the test-only async override that check --deploy rightly reports.
CONFIG_VARIABLES = [
    "DJANGO_ALLOW_ASYNC_UNSAFE",
    "DEBUG",
    "SECRET_KEY",
    "ALLOWED_HOSTS",
    "CSRF_TRUSTED_ORIGINS",
    "DATABASE_URL",
    "DATABASE_PREPARED_STATEMENTS",
    "REDIS_URL",
    "CACHE_URL",
    "BEHIND_TLS_PROXY",
    "SECURE_SSL_REDIRECT",
    "SESSION_COOKIE_SECURE",
    "CSRF_COOKIE_SECURE",
    "SECURE_HSTS_SECONDS",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS",
    "SECURE_HSTS_PRELOAD",
    "STATICFILES_BACKEND",
]
PRODUCTION = {
    "DEBUG": "0",
    "SECRET_KEY": secrets.token_urlsafe(50),
    "ALLOWED_HOSTS": "curation.example.com",
    "CSRF_TRUSTED_ORIGINS": "https://curation.example.com",
    "BEHIND_TLS_PROXY": "1",
}


def manage(*args: str, **variables: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in CONFIG_VARIABLES}
    env.update(variables)
    return subprocess.run(  # noqa: S603 - fixed arguments
        [sys.executable, "manage.py", *args],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def assert_one_line_error(result: subprocess.CompletedProcess, variable: str) -> None:
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert variable in lines[0]
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    "url",
    [
        "mysql://user@127.0.0.1/curation",  # a scheme we do not support
        "postgres://user@127.0.0.1:notaport/curation",  # malformed
        "not a url",
    ],
)
def test_bad_database_url_stops_start_up_with_one_line(url):
    assert_one_line_error(manage("check", DATABASE_URL=url), "DATABASE_URL")


def test_missing_secret_key_stops_production_start_up():
    if (settings.BASE_DIR / ".env").is_file():
        pytest.skip("a local .env file may provide SECRET_KEY")
    variables = {k: v for k, v in PRODUCTION.items() if k != "SECRET_KEY"}
    assert_one_line_error(manage("check", **variables), "SECRET_KEY")


def test_empty_secret_key_stops_production_start_up():
    assert_one_line_error(manage("check", **{**PRODUCTION, "SECRET_KEY": ""}), "SECRET_KEY")


def test_production_settings_pass_the_deployment_checks():
    result = manage("check", "--deploy", "--fail-level", "WARNING", **PRODUCTION)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout
    assert "WARNINGS" not in result.stdout + result.stderr


def test_missing_csrf_trusted_origins_stops_production_start_up():
    if (settings.BASE_DIR / ".env").is_file():
        pytest.skip("a local .env file may provide CSRF_TRUSTED_ORIGINS")
    variables = {k: v for k, v in PRODUCTION.items() if k != "CSRF_TRUSTED_ORIGINS"}
    assert_one_line_error(manage("check", **variables), "CSRF_TRUSTED_ORIGINS")


def test_csrf_trusted_origins_need_a_scheme():
    result = manage("check", **{**PRODUCTION, "CSRF_TRUSTED_ORIGINS": "curation.example.com"})
    assert_one_line_error(result, "CSRF_TRUSTED_ORIGINS")


def test_a_replica_needs_postgresql_for_the_primary():
    result = manage(
        "check", DATABASE_REPLICA_URL="postgres://postgres@127.0.0.1:5432/replica"
    )  # DATABASE_URL: the SQLite default
    assert_one_line_error(result, "DATABASE_REPLICA_URL")


def database_options(url: str = "postgres://postgres@127.0.0.1:5432/curation", **variables: str):
    result = manage(
        "shell",
        "-c",
        "from django.conf import settings; print(settings.DATABASES['default']['OPTIONS'])",
        DATABASE_URL=url,
        **variables,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1]  # after the shell's auto-import notice


def test_on_postgresql_prepared_statements_are_planned_once_unless_turned_off():
    # Behind a pooler that cannot keep prepared statements (DATABASE_PREPARED_STATEMENTS=0)
    # the connection must not send `options` either: PgBouncer refuses it by default.
    # connect_timeout is libpq's own, never sent to the server or a pooler.
    generic = "-c plan_cache_mode=force_generic_plan"
    expected = {"connect_timeout": 5, "prepare_threshold": 0, "options": generic}
    assert database_options() == str(expected)
    assert database_options(DATABASE_PREPARED_STATEMENTS="0") == str({"connect_timeout": 5})
    # Options of the address's own are kept.
    url = "postgres://postgres@127.0.0.1:5432/curation?options=-c%20statement_timeout%3D5000"
    expected = {
        "options": f"-c statement_timeout=5000 {generic}",
        "connect_timeout": 5,
        "prepare_threshold": 0,
    }
    assert database_options(url) == str(expected)


def test_beat_creates_the_folder_of_its_schedule_file(tmp_path):
    """On PostgreSQL + Redis nothing else creates CURATION_VAR_DIR, where beat keeps its
    schedule: beat must not crash on a fresh machine."""
    from curation.celery import BeatScheduler, app

    schedule = tmp_path / "missing" / "var" / "celerybeat-schedule"
    scheduler = BeatScheduler(app, schedule_filename=str(schedule), lazy=False)
    try:
        assert schedule.parent.is_dir()
        assert "dispatch-source-checks" in scheduler.schedule
    finally:
        scheduler.close()


# --- .env.example --------------------------------------------------------------------------

# How settings.py and gunicorn.conf.py read a variable: env.str("X", ...), env("X"),
# _bool("X", ...), os.environ.get("X") and os.environ["X"].
READ_VARIABLE = re.compile(
    r'(?:\benv(?:\.\w+)?|\b_bool|environ(?:\.get)?)\s*[\[(]\s*"([A-Z][A-Z0-9_]*)"'
)
# Set by gunicorn.conf.py for its own workers, never by an operator.
INTERNAL_VARIABLES = {"CURATION_METRICS_DIR_MADE"}


def variables_read() -> set[str]:
    base = settings.BASE_DIR
    sources = [base / "curation" / "settings.py", base / "gunicorn.conf.py"]
    names = set()
    for source in sources:
        names |= set(READ_VARIABLE.findall(source.read_text()))
    return names - INTERNAL_VARIABLES


ASSIGNMENT = re.compile(r"#? ?[A-Z][A-Z0-9_]*=")


def explained(lines: list[str], at: int) -> bool:
    """Whether the comment block above line `at` (up to a blank line) holds a sentence, not
    only other variables."""
    above = []
    for line in reversed(lines[:at]):
        if not line.strip():
            break
        above.append(line)
    return any(line.startswith("#") and not ASSIGNMENT.match(line) for line in above)


def test_env_example_lists_every_variable_the_settings_read_with_a_line_of_meaning():
    example = (settings.BASE_DIR / ".env.example").read_text().splitlines()
    names = variables_read()
    assert {"DEBUG", "DATABASE_URL", "SITE_URL", "WEBHOOK_SECRET_OVERLAP"} <= names
    unlisted, unexplained = [], []
    for name in sorted(names):
        at = [i for i, line in enumerate(example) if re.match(rf"#? ?{name}=", line)]
        if not at:
            unlisted.append(name)
        elif not explained(example, at[0]):
            unexplained.append(name)
    assert not unlisted, f".env.example does not list {unlisted}"
    assert not unexplained, f".env.example gives no line of meaning for {unexplained}"


def test_migrate_and_check_on_the_zero_config_defaults_print_no_system_check_warning(tmp_path):
    url = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    for command in (["migrate", "--noinput"], ["check"]):
        result = manage(*command, DATABASE_URL=url, CURATION_VAR_DIR=str(tmp_path))
        assert result.returncode == 0, result.stderr
        output = result.stdout + result.stderr
        assert "identified some issues" not in output and "WARNINGS" not in output


def test_every_periodic_task_is_in_the_one_beat_schedule_and_names_a_real_task():
    from curation.celery import app

    app.loader.import_default_modules()
    schedule = settings.CELERY_BEAT_SCHEDULE
    assert set(schedule) == {
        "dispatch-source-checks",
        "publish-due-changes",
        "refresh-stale-related",
        "sweep-webhooks",
        "sweep-notifications",
        "sweep-thumbnails",
        "send-digests",
        "forget-unfollowed-addresses",
        "sweep-archive-captures",
        "sweep-evidence",
        "sweep-cache-purges",
    }
    for name, entry in schedule.items():
        assert entry["task"] in app.tasks, name
        assert 0 < entry["options"]["expires"] < entry["schedule"], name
