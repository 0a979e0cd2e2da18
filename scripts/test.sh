#!/usr/bin/env bash
# The full test suite, twice: on the zero-config defaults (SQLite, file-system broker) and on
# PostgreSQL + Redis. Both runs include the integration tests (real worker, real browser).
# Fails when either run fails or runs no test. Extra arguments go to both pytest runs.
# Used by `make test`, which creates the virtualenv first.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=.venv/bin/python
[ -x "$PYTHON" ] || { echo "test: .venv is missing; run 'make test'." >&2; exit 1; }

bash scripts/services.sh

POSTGRES_URL="${TEST_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/test}"
# A database of its own: tests clear the cache, which must not touch a dev broker on db 0.
REDIS_TEST_URL="${TEST_REDIS_URL:-redis://127.0.0.1:6379/15}"
REPORTS=test-artifacts/reports
mkdir -p "$REPORTS"

# Counts from a JUnit report: "tests failures errors skipped".
counts() {
    "$PYTHON" - "$1" <<'PY'
import sys
import xml.etree.ElementTree as ET

root = ET.parse(sys.argv[1]).getroot()
suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
total = {k: sum(int(s.get(k, 0)) for s in suites) for k in ("tests", "failures", "errors", "skipped")}
print(total["tests"], total["failures"], total["errors"], total["skipped"])
PY
}

declare -A RESULT
FAILED=0
PASSED_ALL=0
FAILED_ALL=0
SKIPPED_ALL=0

# run_suite NAME ENV...: run pytest with the given environment, record the outcome.
run_suite() {
    local name="$1"
    shift
    local report="$REPORTS/junit-$name.xml"
    rm -f "$report"
    echo
    echo "=== test run '$name': $* ==="
    local started=$SECONDS status=0
    env -u DATABASE_URL -u REDIS_URL -u CACHE_URL "$@" \
        "$PYTHON" -m pytest -p no:cacheprovider --junitxml="$report" \
        --cov --cov-append --cov-report= "${PYTEST_ARGS[@]}" || status=$?
    local elapsed=$((SECONDS - started))
    if [ "$status" -eq 5 ]; then
        RESULT[$name]="FAILED: pytest collected no test (exit 5) [${elapsed}s]"
        FAILED=1
        return
    fi
    if [ ! -s "$report" ]; then
        RESULT[$name]="FAILED: pytest exit $status and no report [${elapsed}s]"
        FAILED=1
        return
    fi
    local tests failures errors skipped passed
    read -r tests failures errors skipped < <(counts "$report")
    passed=$((tests - failures - errors - skipped))
    PASSED_ALL=$((PASSED_ALL + passed))
    FAILED_ALL=$((FAILED_ALL + failures + errors))
    SKIPPED_ALL=$((SKIPPED_ALL + skipped))
    local summary="$passed passed, $((failures + errors)) failed, $skipped skipped [${elapsed}s]"
    if [ "$status" -ne 0 ]; then
        RESULT[$name]="FAILED (pytest exit $status): $summary"
        FAILED=1
    elif [ "$passed" -eq 0 ]; then
        RESULT[$name]="FAILED: no test passed: $summary"
        FAILED=1
    else
        RESULT[$name]="ok: $summary"
    fi
}

PYTEST_ARGS=("$@")
# Both runs add to one coverage figure (pyproject.toml's [tool.coverage]).
rm -f .coverage
run_suite sqlite
run_suite postgres-redis DATABASE_URL="$POSTGRES_URL" REDIS_URL="$REDIS_TEST_URL"

echo
echo "=== test summary ==="
echo "SQLite + file-system broker:  ${RESULT[sqlite]}"
echo "PostgreSQL + Redis:           ${RESULT[postgres-redis]}"
if [ "$FAILED" -ne 0 ]; then
    echo "test: FAILED (see above)" >&2
fi
# Coverage of both runs, against the floor; only with the whole suite (arguments select
# part of it, whose figure means nothing against the floor).
if [ "${#PYTEST_ARGS[@]}" -eq 0 ] && [ -f .coverage ]; then
    total=$("$PYTHON" -m coverage report --format=total)
    floor=$("$PYTHON" -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["tool"]["coverage"]["report"]["fail_under"])')
    if "$PYTHON" -m coverage report --fail-under="$floor" >/dev/null; then
        echo "coverage: $total% of summaries/ and curation/ (floor $floor%)"
    else
        echo "coverage: $total% of summaries/ and curation/, under the floor of $floor%" >&2
        FAILED=1
    fi
fi
echo "tests: $PASSED_ALL passed, $FAILED_ALL failed, $SKIPPED_ALL skipped"
exit "$FAILED"
