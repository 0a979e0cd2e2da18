"""The content generation kept by LISTEN/NOTIFY, with several processes on PostgreSQL.

gunicorn with two worker processes serves the demo from a PostgreSQL database of the
test's own (made from a migrated template, dropped after the test). Each worker keeps the
content generation in memory, current by a listener of its own
(summaries/pagecache/listening.py), so cached pages cost no query; a change committed by
one worker or by another process must still reach every worker before its next answer.
"""

import json
import os
import subprocess
import sys
import time
from urllib.parse import urlsplit

import psycopg
import pytest

from summaries.pagecache.listening import APPLICATION_NAME

from .test_defaults_multiprocess import (
    API_SUMMARY,
    BASE_DIR,
    CHECKER,
    PAGE,
    Site,
    _editor,
    _environment,
    _manage,
    _run,
    _summary,
    gunicorn,
)

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        not os.environ.get("DATABASE_URL", "").startswith("postgres"),
        reason="LISTEN/NOTIFY: PostgreSQL (DATABASE_URL)",
    ),
]


def _server_url(database: str) -> str:
    given = urlsplit(os.environ["DATABASE_URL"])
    return given._replace(path=f"/{database}").geturl()


def _admin(sql: str) -> None:
    with psycopg.connect(_server_url("postgres"), autocommit=True) as connection:
        connection.execute(sql)


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """A migrated database with the demo and an editor's token, to copy for each test."""
    name = f"curation_listen_template_{os.getpid()}"
    _admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    _admin(f"CREATE DATABASE {name}")
    var_dir = tmp_path_factory.mktemp("listening-site") / "var"
    env = {**_environment(var_dir), "DATABASE_URL": _server_url(name)}
    try:
        _manage(env, "migrate", "--noinput")
        _manage(env, "load_demo")
        _manage(env, "create_demo_editor")
        token = _manage(env, "drf_create_token", "editor").split("Generated token ", 1)[1]
        yield name, token.split()[0]
    finally:
        _admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture
def site(template, tmp_path):
    name, token = template
    database = f"curation_listen_{os.getpid()}"
    _admin(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
    _admin(f"CREATE DATABASE {database} TEMPLATE {name}")
    var_dir = tmp_path / "var"
    var_dir.mkdir()
    env = {**_environment(var_dir), "DATABASE_URL": _server_url(database)}
    try:
        yield Site(var_dir=var_dir, env=env, token=token)
    finally:
        _admin(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")


def _listeners(site: Site) -> int:
    with psycopg.connect(site.env["DATABASE_URL"], autocommit=True) as connection:
        return connection.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND application_name = %s",
            [APPLICATION_NAME],
        ).fetchone()[0]


def test_every_worker_listens_and_an_unpublish_reaches_the_other_at_once(site):
    with gunicorn(site) as server:
        server.warm(PAGE)
        assert _listeners(site) == 2  # one per worker

        # Answered by one worker; the other learns it only from the notification.
        unpublished = server.request("POST", f"{API_SUMMARY}unpublish/", _editor(site))
        assert unpublished.status == 200, unpublished.body[:500]

        answers = server.get_many(PAGE, 20)
        assert [a.status for a in answers] == [404] * 20, (
            f"(worker, status) after unpublishing: {_summary(answers)}"
        )
        assert len({a.pid for a in answers}) == 2, _summary(answers)


def test_a_change_committed_by_another_process_reaches_every_worker(site):
    with gunicorn(site) as server:
        before = server.warm(PAGE)
        assert all(b"Not checked yet" in a.body for a in before if a.status == 200)

        # What the Celery worker does after checking links: another process, no request.
        report = json.loads(
            _run(
                {**site.env, "CHECKER_SECONDS": "0", "CHECKER_STATES": "broken"},
                "-c",
                CHECKER,
            )
        )
        assert report["recorded"] > 0 and not report["errors"], report

        answers = server.get_many(PAGE, 20)
        assert all(b"Unavailable when last checked" in a.body for a in answers), _summary(answers)
        assert len({a.pid for a in answers}) == 2, _summary(answers)


def test_listeners_cut_off_listen_again_and_miss_no_change_made_meanwhile(site):
    with gunicorn(site) as server:
        server.warm(PAGE)
        with psycopg.connect(site.env["DATABASE_URL"], autocommit=True) as connection:
            cut = connection.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND application_name = %s",
                [APPLICATION_NAME],
            ).fetchall()
        assert len(cut) == 2

        # Unpublished by another process as the workers connect again.
        shell = "from summaries.demo.data import MAIN_VIDEO as v; from summaries.models import Summary; from summaries.editing import workflow; workflow.unpublish_summary(summary=Summary.objects.get(video__slug=v['slug']))"  # noqa: E501
        done = subprocess.run(  # noqa: S603 - fixed arguments
            [sys.executable, "manage.py", "shell", "-c", shell],
            cwd=BASE_DIR,
            env=site.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-3000:]

        answers = server.get_many(PAGE, 20)
        assert [a.status for a in answers] == [404] * 20, _summary(answers)
        deadline = time.monotonic() + 15
        while _listeners(site) < 2:  # both listen again
            assert time.monotonic() < deadline, "the workers did not listen again"
            time.sleep(0.2)
