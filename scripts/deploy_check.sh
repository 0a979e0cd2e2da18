#!/usr/bin/env bash
# Runs the commands of docs/deploy.md end to end on this machine, as a deployment would:
# migrate, collectstatic, check --deploy, web + worker + beat with production settings, the
# probes, /metrics, worker_health, SIGTERM to each, a PostgreSQL dump and its restore, and an
# SQLite backup. Uses PostgreSQL and Redis on loopback (scripts/services.sh starts them), two
# scratch databases (dropped at the end), Redis db 10 (flushed) and a scratch folder.
# Usage: bash scripts/deploy_check.sh    (prints DEPLOY CHECK OK at the end, or fails)
set -euo pipefail
cd "$(dirname "$0")/.."
PATH="$PWD/.venv/bin:$PATH"
PG=postgres://postgres@127.0.0.1:5432
PORT=${PORT:-8765}
SCRATCH=$(mktemp -d /tmp/curation-deploy-check-XXXXXX)
say() { printf '\n== %s\n' "$*"; }

export DEBUG=0 SECRET_KEY="$(python -c 'import secrets; print(secrets.token_urlsafe(50))')"
export ALLOWED_HOSTS=127.0.0.1 CSRF_TRUSTED_ORIGINS=https://curation.example.com BEHIND_TLS_PROXY=1
export DATABASE_URL=$PG/curation_deploy_check REDIS_URL=redis://127.0.0.1:6379/10
export CURATION_VAR_DIR=$SCRATCH/var STATIC_ROOT=$SCRATCH/static LOG_FORMAT=json METRICS_TOKEN=scrape-me

pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    dropdb -h 127.0.0.1 -U postgres --if-exists curation_deploy_check
    dropdb -h 127.0.0.1 -U postgres --if-exists curation_deploy_restored
    rm -rf "$SCRATCH"
}
trap cleanup EXIT

bash scripts/services.sh postgres redis
dropdb -h 127.0.0.1 -U postgres --if-exists curation_deploy_check
createdb -h 127.0.0.1 -U postgres curation_deploy_check
redis-cli -n 10 flushdb >/dev/null

say "Upgrading: migrate, collectstatic, check --deploy"
python manage.py migrate --plan | tail -2
python manage.py migrate --noinput | tail -1
python manage.py collectstatic --noinput | tail -1
python manage.py check --deploy --fail-level WARNING
python manage.py load_demo

say "The processes: web, worker, exactly one beat"
gunicorn curation.wsgi --bind "127.0.0.1:$PORT" --workers 2 >"$SCRATCH/web.log" 2>&1 &
web=$!
celery -A curation worker --concurrency 2 >"$SCRATCH/worker.log" 2>&1 &
worker=$!
celery -A curation beat >"$SCRATCH/beat.log" 2>&1 &
beat=$!
pids=("$web" "$worker" "$beat")
for _ in $(seq 60); do curl -fs "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.5; done

say "Health and metrics (plain HTTP, the pod's address as Host)"
pod=(-H "Host: 10.0.0.7:$PORT")  # not in ALLOWED_HOSTS, as an orchestrator sends it
curl -fsS "${pod[@]}" "http://127.0.0.1:$PORT/healthz"; echo
curl -fsS "${pod[@]}" "http://127.0.0.1:$PORT/readyz"; echo
status=$(curl -s -o /dev/null -w '%{http_code}' "${pod[@]}" "http://127.0.0.1:$PORT/metrics")
[ "$status" = 404 ] || { echo "/metrics without the token answered $status" >&2; exit 1; }
curl -fsS "${pod[@]}" -H "Authorization: Bearer $METRICS_TOKEN" "http://127.0.0.1:$PORT/metrics" \
    | grep -E '^curation_(task_queue_length|oldest_due_source_age_seconds)[ {]'
for _ in $(seq 30); do python manage.py worker_health --timeout 5 && break; sleep 1; done
kill -0 "$beat" || { echo "beat exited:" >&2; tail -5 "$SCRATCH/beat.log" >&2; exit 1; }

say "Backups: pg_dump, and its restore into an empty database"
pg_dump --format=custom --file="$SCRATCH/curation-$(date +%F).dump" "$DATABASE_URL"
createdb -h 127.0.0.1 -U postgres curation_deploy_restored
pg_restore --no-owner --dbname="$PG/curation_deploy_restored" "$SCRATCH/curation-$(date +%F).dump"
DATABASE_URL=$PG/curation_deploy_restored python manage.py migrate --check
echo "summaries in the restored database: $(psql -h 127.0.0.1 -U postgres -d curation_deploy_restored -Atc 'select count(*) from summaries_summary')"

say "Shutdown: SIGTERM to each process"
for pid in "$web" "$worker" "$beat"; do
    started=$SECONDS
    kill -TERM "$pid"
    wait "$pid" || { echo "process $pid exited with $? after SIGTERM" >&2; exit 1; }
    echo "process $pid stopped in $((SECONDS - started)) s"
done
pids=()

say "SQLite (the zero-config default): the online backup"
(
    unset DATABASE_URL REDIS_URL
    export CURATION_VAR_DIR=$SCRATCH/sqlite
    python manage.py migrate --noinput | tail -1
    python manage.py load_demo
    sqlite3 "$CURATION_VAR_DIR/db.sqlite3" ".backup $CURATION_VAR_DIR/backup-$(date +%F).sqlite3"
    sqlite3 "$CURATION_VAR_DIR/backup-$(date +%F).sqlite3" \
        "pragma integrity_check; select count(*) from summaries_summary;"
)
echo
echo "DEPLOY CHECK OK"
