#!/usr/bin/env bash
# The full test suite, twice: on the zero-config defaults (SQLite, file-system broker) and on
# PostgreSQL + Redis. Both runs include the integration tests (real worker, real browser),
# except the browser tests named tests/integration/*_browser.py: they run in the PostgreSQL
# run only, the stack production runs, rather than taking their time twice.
#
# Each run is split into lanes that run at the same time, each a pytest process with a
# database and a Redis database of its own, so that a machine with two cores is kept busy
# while integration tests wait on workers, browsers and restarts:
#   the unit tests of both runs (pytest-xdist, two processes each), which use every core;
#   beside them, each run's integration tests that mostly wait (WAITING, SERVICES: workers
#   killed and restarted, machines, a replica, Redis servers stopped and restarted);
#   once a run's unit tests are done, its other integration tests (one process: it shares
#   a Celery worker and a browser between its tests); the *_browser.py tests, of the
#   PostgreSQL run only, in a lane of their own started as soon as either run's unit tests
#   are done.
# Output of each lane goes to test-artifacts/logs/<lane>.log and is printed when the lane
# ends; the time of each lane and stage is printed with it.
#
# With arguments (`bash scripts/test.sh -k admin`), the two runs go one after the other with
# those arguments, unsplit (both run the browser tests the arguments select). Fails when a
# run fails or no test of a run passed; without arguments also when coverage falls under
# the floor. Coverage is measured on the PostgreSQL + Redis run, the stack production runs
# (tracing costs about a third more CPU, and measuring the other run too adds 0.4 points,
# 2026-12-05 at 049d141).
# Used by `make test`, which creates the virtualenv first.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=.venv/bin/python
[ -x "$PYTHON" ] || { echo "test: .venv is missing; run 'make test'." >&2; exit 1; }

bash scripts/services.sh

POSTGRES_URL="${TEST_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/test}"
# Redis databases of the tests' own: tests clear the cache, which must not touch a
# development broker on db 0, nor another lane's queue.
REDIS_BASE="${TEST_REDIS_URL:-redis://127.0.0.1:6379/15}"
REDIS_BASE="${REDIS_BASE%/*}"
REPORTS=test-artifacts/reports
LOGS=test-artifacts/logs
# Integration modules that mostly wait (workers killed and restarted, timeouts, leases):
# they run beside the unit tests rather than after them, each run's in a lane of its own.
WAITING=(
    tests/integration/test_source_checks.py
    tests/integration/test_graceful_shutdown.py
    tests/integration/test_webhooks_worker.py
    tests/integration/test_ops_worker.py
    tests/integration/test_metrics_gunicorn.py
)
# ...and those of the PostgreSQL run only: machines, a replica, Redis servers of their own.
SERVICES=(
    "${WAITING[@]}"
    tests/integration/test_machines.py
    tests/integration/test_replica.py
    tests/integration/test_worker_redis_restart.py
    tests/integration/test_page_cache_redis_restart.py
    tests/integration/test_page_cache_redis.py
)
IGNORE_SERVICES=("${SERVICES[@]/#/--ignore=}")
# The *_browser.py tests: in the PostgreSQL run only, a lane of their own beside its other
# integration tests, on the cores the unit tests no longer use; the SQLite run ignores them.
BROWSER=(tests/integration/*_browser.py)
IGNORE_BROWSER=("${BROWSER[@]/#/--ignore=}")
mkdir -p "$REPORTS" "$LOGS"
# Each lane's coverage data in a folder of its own: pytest-cov combines the data files it
# finds beside its own when a lane ends, which must not take another lane's.
COVERAGE_DIR=test-artifacts/coverage
# Coverage is measured only when the whole suite runs.
MEASURE=$([ "$#" -eq 0 ] && echo whole || echo part)
rm -rf "$COVERAGE_DIR"
rm -f "$REPORTS"/junit-*.xml "$LOGS"/*.status .coverage .coverage.*

# Counts from JUnit reports: "tests failures errors skipped", summed.
counts() {
    "$PYTHON" - "$@" <<'PY'
import sys
import xml.etree.ElementTree as ET

total = dict.fromkeys(("tests", "failures", "errors", "skipped"), 0)
for path in sys.argv[1:]:
    root = ET.parse(path).getroot()
    for suite in [root] if root.tag == "testsuite" else root.findall("testsuite"):
        for key in total:
            total[key] += int(suite.get(key, 0))
print(*total.values())
PY
}

declare -A STATUS ELAPSED PIDS STARTED LANE_OF

# pytest_lane NAME ENV... -- PYTEST-ARGS...: run one pytest process, output to its log.
pytest_lane() {
    local name="$1"
    shift
    local env_args=()
    while [ "$1" != "--" ]; do
        env_args+=("$1")
        shift
    done
    shift
    local coverage=()
    if [ "$MEASURE" = whole ] && [[ "$name" == postgres-* ]]; then
        coverage=(--cov --cov-report= --cov-fail-under=0)
    fi
    env -u DATABASE_URL -u REDIS_URL -u CACHE_URL COVERAGE_FILE="$COVERAGE_DIR/$name/.coverage" "${env_args[@]}" \
        "$PYTHON" -m pytest -p no:cacheprovider --junitxml="$REPORTS/junit-$name.xml" \
        "${coverage[@]}" "$@"
}

# start NAME ENV... -- ARGS...: start a lane in the background.
start() {
    local name="$1"
    STARTED[$name]=$SECONDS
    {
        local status=0
        mkdir -p "$COVERAGE_DIR/$name"
        pytest_lane "$@" >"$LOGS/$name.log" 2>&1 || status=$?
        echo "$status $((SECONDS - STARTED[$name]))" >"$LOGS/$name.status"
    } &
    PIDS[$name]=$!
    LANE_OF[$!]=$name
    echo "  started lane $name"
}

# finish NAME...: wait for lanes, then print each one's output, exit status and time.
finish() {
    local name
    for name in "$@"; do
        wait "${PIDS[$name]}" 2>/dev/null || true # already reaped if `wait -n` saw it end
        read -r "STATUS[$name]" "ELAPSED[$name]" <"$LOGS/$name.status"
    done
    for name in "$@"; do
        echo
        echo "=== lane $name: pytest exit ${STATUS[$name]} after ${ELAPSED[$name]}s ($LOGS/$name.log) ==="
        cat "$LOGS/$name.log"
    done
}

SQLITE_ENV=()
POSTGRES_ENV=(DATABASE_URL="$POSTGRES_URL")

run_lanes() {
    local begun=$SECONDS
    echo "=== unit tests of both runs, and the integration tests that mostly wait ==="
    start sqlite-unit "${SQLITE_ENV[@]}" -- -m "not integration" -n 2
    start postgres-unit "${POSTGRES_ENV[@]}" REDIS_URL="$REDIS_BASE/14" -- -m "not integration" -n 2
    # Test databases (and on SQLite a broker and cache folder) of their own: they overlap
    # the other integration lanes.
    start sqlite-services CURATION_VAR_DIR="$PWD/var/test-services" \
        -- -m integration "${WAITING[@]}"
    start postgres-services DATABASE_URL="${POSTGRES_URL}_services" REDIS_URL="$REDIS_BASE/13" \
        -- -m integration "${SERVICES[@]}"
    # Each run's integration tests start as soon as its unit tests are done.
    local unit=("${PIDS[sqlite-unit]}" "${PIDS[postgres-unit]}") ended name
    while [ "${#unit[@]}" -gt 0 ]; do
        wait -n -p ended "${unit[@]}" || true
        name="${LANE_OF[$ended]}"
        finish "$name"
        echo
        echo "=== ${name%-unit} integration tests ($((SECONDS - begun))s so far) ==="
        if [ "$name" = sqlite-unit ]; then
            start sqlite-integration "${SQLITE_ENV[@]}" -- \
                -m integration "${IGNORE_SERVICES[@]}" "${IGNORE_BROWSER[@]}"
        else
            start postgres-integration "${POSTGRES_ENV[@]}" REDIS_URL="$REDIS_BASE/15" -- \
                -m integration "${IGNORE_SERVICES[@]}" "${IGNORE_BROWSER[@]}"
        fi
        # The PostgreSQL run's browser tests need no unit test before them: they start as
        # soon as either run's unit tests free a core.
        if [ -z "${PIDS[postgres-browser]:-}" ]; then
            start postgres-browser DATABASE_URL="${POSTGRES_URL}_browser" REDIS_URL="$REDIS_BASE/12" \
                -- -m integration "${BROWSER[@]}"
        fi
        local others=() pid
        for pid in "${unit[@]}"; do
            [ "$pid" = "$ended" ] || others+=("$pid")
        done
        unit=("${others[@]}")
    done
    finish sqlite-services postgres-services sqlite-integration postgres-integration \
        postgres-browser
    echo
    echo "=== all lanes done after $((SECONDS - begun))s ==="
}

run_unsplit() {
    local begun=$SECONDS
    start sqlite "${SQLITE_ENV[@]}" -- "$@"
    finish sqlite
    start postgres-redis "${POSTGRES_ENV[@]}" REDIS_URL="$REDIS_BASE/15" -- "$@"
    finish postgres-redis
    echo
    echo "=== both runs done after $((SECONDS - begun))s ==="
}

FAILED=0
PASSED_ALL=0
FAILED_ALL=0
SKIPPED_ALL=0

# summarise LABEL LANE...: one line for a run made of these lanes.
summarise() {
    local label="$1" name reports=() bad=""
    shift
    for name in "$@"; do
        local report="$REPORTS/junit-$name.xml"
        if [ "${STATUS[$name]}" -eq 5 ]; then
            bad+=" $name collected no test (exit 5);"
        elif [ ! -s "$report" ]; then
            bad+=" $name: pytest exit ${STATUS[$name]} and no report;"
            continue
        elif [ "${STATUS[$name]}" -ne 0 ]; then
            bad+=" $name: pytest exit ${STATUS[$name]};"
        fi
        reports+=("$report")
    done
    local tests=0 failures=0 errors=0 skipped=0
    [ "${#reports[@]}" -gt 0 ] && read -r tests failures errors skipped < <(counts "${reports[@]}")
    local passed=$((tests - failures - errors - skipped))
    PASSED_ALL=$((PASSED_ALL + passed))
    FAILED_ALL=$((FAILED_ALL + failures + errors))
    SKIPPED_ALL=$((SKIPPED_ALL + skipped))
    local line="$passed passed, $((failures + errors)) failed, $skipped skipped"
    [ "$passed" -eq 0 ] && bad+=" no test passed;"
    if [ -n "$bad" ]; then
        FAILED=1
        printf '%-30s FAILED (%s): %s\n' "$label:" "${bad# }" "$line"
    else
        printf '%-30s ok: %s\n' "$label:" "$line"
    fi
}

echo
if [ "$#" -eq 0 ]; then
    run_lanes
    SQLITE_LANES=(sqlite-unit sqlite-services sqlite-integration)
    POSTGRES_LANES=(postgres-unit postgres-services postgres-integration postgres-browser)
else
    run_unsplit "$@"
    SQLITE_LANES=(sqlite)
    POSTGRES_LANES=(postgres-redis)
fi

echo
echo "=== test summary ==="
for name in "${SQLITE_LANES[@]}" "${POSTGRES_LANES[@]}"; do
    printf '  lane %-22s %5ss, pytest exit %s\n' "$name" "${ELAPSED[$name]}" "${STATUS[$name]}"
done
summarise "SQLite + file-system broker" "${SQLITE_LANES[@]}"
summarise "PostgreSQL + Redis" "${POSTGRES_LANES[@]}"
if [ "$FAILED" -ne 0 ]; then
    echo "test: FAILED (see above)" >&2
fi
# Coverage of the PostgreSQL + Redis run, against the floor; only with the whole suite
# (arguments select part of it, whose figure means nothing against the floor).
if [ "$#" -eq 0 ] && "$PYTHON" -m coverage combine --keep -q "$COVERAGE_DIR"/*/.coverage >/dev/null 2>&1; then
    total=$("$PYTHON" -m coverage report --format=total)
    floor=$("$PYTHON" -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["tool"]["coverage"]["report"]["fail_under"])')
    if "$PYTHON" -m coverage report --fail-under="$floor" >/dev/null; then
        echo "coverage: $total% of summaries/ and curation/ in the PostgreSQL + Redis run (floor $floor%)"
    else
        echo "coverage: $total% of summaries/ and curation/ in the PostgreSQL + Redis run, under the floor of $floor%" >&2
        FAILED=1
    fi
elif [ "$#" -eq 0 ]; then
    echo "coverage: no data to combine" >&2
    FAILED=1
fi
echo "tests: $PASSED_ALL passed, $FAILED_ALL failed, $SKIPPED_ALL skipped"
exit "$FAILED"
