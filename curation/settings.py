"""Settings for the curation service, read from the environment.

Every value has a development default so that a fresh clone runs with no configuration
(SQLite, an embedded file-system Celery broker, a file cache under var/ shared by every
process on the machine). Production values
are required once DEBUG is off; a missing or invalid one stops start-up with one line that
names the variable (see curation/startup.py).
"""

from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(environ.Env().str("CURATION_VAR_DIR", default=str(BASE_DIR / "var")))

env = environ.Env()
if (BASE_DIR / ".env").is_file():
    env.read_env(BASE_DIR / ".env")


def _bool(name, default):
    try:
        return env.bool(name, default=default)
    except ValueError as exc:  # pragma: no cover - message path tested via subprocess
        raise ImproperlyConfigured(f"{name} must be a boolean (1/0, true/false): {exc}") from exc


DEBUG = _bool("DEBUG", True)

# A fixed development key keeps sessions valid across restarts; production must set its own.
_DEV_SECRET_KEY = "django-insecure-dev-only-key-do-not-use-in-production"  # noqa: S105
SECRET_KEY = env.str("SECRET_KEY", default=_DEV_SECRET_KEY if DEBUG else "")
if not SECRET_KEY:
    raise ImproperlyConfigured("SECRET_KEY is required when DEBUG is off.")
if not DEBUG and (SECRET_KEY == _DEV_SECRET_KEY or len(SECRET_KEY) < 50):
    raise ImproperlyConfigured(
        "SECRET_KEY must be a random string of 50+ characters in production."
    )

ALLOWED_HOSTS = env.list(
    "ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"] if DEBUG else []
)
if not ALLOWED_HOSTS:
    raise ImproperlyConfigured("ALLOWED_HOSTS is required when DEBUG is off (comma-separated).")
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])
if not DEBUG and not CSRF_TRUSTED_ORIGINS:
    # Behind a TLS proxy Django cannot tell the origin editors post from on its own; the
    # admin would refuse every form with a CSRF failure.
    raise ImproperlyConfigured(
        "CSRF_TRUSTED_ORIGINS is required when DEBUG is off: the site's origins with "
        "scheme, comma-separated (e.g. https://curation.example.com)."
    )
for _origin in CSRF_TRUSTED_ORIGINS:
    if "://" not in _origin:
        raise ImproperlyConfigured(
            "CSRF_TRUSTED_ORIGINS entries need a scheme, e.g. https://example.com "
            f"(got {_origin!r})."
        )

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.sitemaps",
    "csp",
    "adminsortable2",
    "reversion",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "drf_spectacular",
    # Swagger UI's files served from this site: the docs work with no CDN and a strict CSP.
    "drf_spectacular_sidecar",
    "corsheaders",
    "summaries",
]

MIDDLEWARE = [
    # First: every request, cached pages and redirects too, gets an id, a log line and a
    # count (summaries/ops/logs.py).
    "summaries.ops.logs.RequestLogMiddleware",
    # Probes (/healthz, /readyz) and /metrics are answered before the HTTPS redirect and the
    # Host check: load balancers and Prometheus come over plain HTTP, with the pod's address
    # as Host.
    "summaries.ops.middleware.ProbeMiddleware",
    # Static files next, with SecurityMiddleware's headers stored with each file and its
    # HTTPS redirect kept (summaries/ops/static.py): they skip everything below.
    "summaries.ops.static.StaticFilesMiddleware",
    # Before anything that may answer on its own (the page cache, CommonMiddleware's
    # redirects), so that those answers carry CORS headers too (they vary with the Origin,
    # so they are never stored); it only acts on CORS_URLS_REGEX (the API).
    "corsheaders.middleware.CorsMiddleware",
    # A cached reader page skips everything below. It is stored with the headers
    # SecurityMiddleware gave it when rendered, and a plain-HTTP request that
    # SECURE_SSL_REDIRECT sends to HTTPS goes down to SecurityMiddleware.
    "summaries.pagecache.middleware.PageCacheMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # django-csp's, with the admin's own policy under /admin/.
    "summaries.ops.csp.ContentSecurityPolicyMiddleware",
    # A view that finds the database or Redis unreachable answers 503, not 500.
    "summaries.ops.outage.OutageMiddleware",
]

ROOT_URLCONF = "curation.urls"
WSGI_APPLICATION = "curation.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database ---------------------------------------------------------------------------
_DEFAULT_DATABASE_URL = f"sqlite:///{VAR_DIR / 'db.sqlite3'}"
_database_url = env.str("DATABASE_URL", default=_DEFAULT_DATABASE_URL)
if not _database_url.startswith(("sqlite:", "postgres:", "postgresql:", "pgsql:")):
    raise ImproperlyConfigured(
        f"DATABASE_URL is invalid: expected sqlite:///PATH or postgres://USER@HOST/NAME, "
        f"got {_database_url.split(':', 1)[0]!r} as the scheme."
    )
try:
    DATABASES = {"default": env.db_url_config(_database_url)}
except Exception as exc:  # django-environ raises several kinds on a malformed URL
    raise ImproperlyConfigured(f"DATABASE_URL is invalid: {exc}") from exc
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        # Wait for a writer rather than failing at once when the web and worker processes
        # overlap.
        timeout=20,
        # Every transaction takes the write lock as it begins (BEGIN IMMEDIATE), where the
        # timeout applies; one that began by reading cannot wait for it later and fails at
        # once with "database is locked".
        transaction_mode="IMMEDIATE",
        # WAL: readers never wait for the writer, nor the writer for readers. NORMAL is
        # durable with WAL except for the last commits on a power cut.
        init_command="PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL",
    )
    # The summary_visibility index covers the video id on PostgreSQL (lists of live videos
    # read it from the index alone); SQLite builds the same index without the covered
    # column, which costs nothing but a system-check warning on every command.
    SILENCED_SYSTEM_CHECKS = ["models.W040"]
else:
    DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=60)
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
    # Connecting gives up after this many seconds (libpq waits forever by default) when
    # the server's address does not answer, or accepts and then says nothing; /readyz
    # checks the database on these connections. DATABASE_URL's ?connect_timeout= wins.
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault("connect_timeout", 5)
    # Reader pages run their queries as statements PostgreSQL plans once per connection
    # (summaries/reader/compiled.py: only those bind parameters on the server; psycopg
    # prepares nothing bound in the client). Off (0) behind a pooler that cannot keep
    # prepared statements, such as PgBouncer in transaction mode before 1.21.
    if env.bool("DATABASE_PREPARED_STATEMENTS", default=True):
        options = DATABASES["default"].setdefault("OPTIONS", {})
        options["prepare_threshold"] = 0
        # Left to choose, PostgreSQL planned most of them again on every run (a custom
        # plan looked cheaper than the generic one), 0.1-0.4 ms each: a third of the
        # summary page's SQL time. They all look rows up by id, slug or channel through
        # an index, which the generic plan does whatever the values.
        # Added to any `options` the DATABASE_URL carries (…?options=-c%20…).
        given = options.get("options", "")
        options["options"] = f"{given} -c plan_cache_mode=force_generic_plan".strip()
# A PostgreSQL read replica for anonymous API reads (curation/replica.py says which reads).
_replica_url = env.str("DATABASE_REPLICA_URL", default="")
if _replica_url:
    if not DATABASES["default"]["ENGINE"].endswith("postgresql"):
        raise ImproperlyConfigured("DATABASE_REPLICA_URL needs DATABASE_URL on PostgreSQL too.")
    try:
        DATABASES["replica"] = env.db_url_config(_replica_url)
    except Exception as exc:  # django-environ raises several kinds on a malformed URL
        raise ImproperlyConfigured(f"DATABASE_REPLICA_URL is invalid: {exc}") from exc
    DATABASES["replica"].update(
        CONN_MAX_AGE=DATABASES["default"]["CONN_MAX_AGE"],
        CONN_HEALTH_CHECKS=True,
        # Tests read the primary through it: a test database has no replica.
        TEST={"MIRROR": "default"},
    )
    DATABASE_ROUTERS = ["curation.replica.ReplicaRouter"]
    MIDDLEWARE.insert(1, "curation.replica.ReplicaMiddleware")
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Redis: broker and cache ------------------------------------------------------------
REDIS_URL = env.str("REDIS_URL", default="")
CACHE_URL = env.str("CACHE_URL", default="")
for _name, _url in (("REDIS_URL", REDIS_URL), ("CACHE_URL", CACHE_URL)):
    if _url and not _url.startswith(("redis://", "rediss://", "unix://")):
        raise ImproperlyConfigured(
            f"{_name} is invalid: expected redis://HOST:PORT/DB, got {_url!r}."
        )

# The cache gets its own Redis when CACHE_URL is set, so that cache eviction can never
# touch queued tasks in the broker's Redis.
_cache_location = CACHE_URL or REDIS_URL
if _cache_location:
    CACHES = {
        "default": {
            "BACKEND": "summaries.pagecache.backend.RedisCache",
            "LOCATION": _cache_location,
            "KEY_PREFIX": "curation",
            "TIMEOUT": 300,
        }
    }
else:
    # No Redis: files under var/cache, shared by every process on the machine (web workers,
    # Celery, manage.py), so a change made in one makes the others' cached pages stale. A
    # per-process memory cache would keep serving them. Its add/incr, which the content
    # generation relies on, are atomic across processes (summaries/pagecache/filecache.py).
    CACHES = {
        "default": {
            "BACKEND": "summaries.pagecache.filecache.FileBasedCache",
            "LOCATION": str((VAR_DIR / "cache").absolute()),
            "KEY_PREFIX": "curation",
            "TIMEOUT": 300,
            # Files, one per key; past this, expired ones go first, then the soonest to expire.
            "OPTIONS": {"MAX_ENTRIES": 10_000, "CULL_FREQUENCY": 3},
        }
    }
# Bytes of cached pages each process keeps a copy of, so that a hit reads only the content
# generation from Redis (summaries/pagecache/middleware.py). Off by default without Redis.
PAGE_CACHE_LOCAL_BYTES = env.int(
    "PAGE_CACHE_LOCAL_BYTES", default=32 * 1024 * 1024 if _cache_location else 0
)
# Parts of pages shared by many of them (a channel's filter choices, a list's length) are
# cached like pages (summaries/pagecache/fragments.py). Off only to measure a page with no
# cache at all (bench/render_uncached.py, the "cold" runs of bench/run_pages.py).
PAGE_CACHE_FRAGMENTS = _bool("PAGE_CACHE_FRAGMENTS", True)
# On PostgreSQL each web process keeps a copy of the content generation that LISTEN/NOTIFY
# keeps current, so a cached page needs no query (summaries/pagecache/listening.py). Off
# behind a pooler that cannot keep LISTEN (PgBouncer in transaction mode): every request
# then reads the generation itself.
PAGE_CACHE_LISTEN = _bool("PAGE_CACHE_LISTEN", True)
# --- HTTP cache in front (Varnish, a CDN): docs/deploy.md "HTTP cache in front" ----------
# Seconds a shared cache may keep a reader page, feed, sitemap, oEmbed or anonymous API
# read (s-maxage; less when a scheduled publication comes sooner). Long only where purges reach
# the cache (HTTP_CACHE_PURGE_BACKEND): every change purges the pages that show it.
HTTP_CACHE_S_MAXAGE = env.int("HTTP_CACHE_S_MAXAGE", default=60)
# The response header naming what an answer shows (space-separated tags): `xkey` for
# Varnish's xkey, `Surrogate-Key` for Fastly, `Cache-Tag` for Cloudflare.
HTTP_CACHE_TAG_HEADER = env.str("HTTP_CACHE_TAG_HEADER", default="xkey")
# Where purges go: "" sends none; "varnish" sends PURGE with an xkey-purge header to each
# of HTTP_CACHE_PURGE_URLS; or the dotted path of a class of your own (purge.py).
HTTP_CACHE_PURGE_BACKEND = env.str("HTTP_CACHE_PURGE_BACKEND", default="")
HTTP_CACHE_PURGE_URLS = env.list("HTTP_CACHE_PURGE_URLS", default=[])
HTTP_CACHE_PURGE_TIMEOUT = env.float("HTTP_CACHE_PURGE_TIMEOUT", default=5.0)
# The Celery queue purges go to ("" the default queue): a queue of their own keeps them
# from waiting behind source checks.
HTTP_CACHE_PURGE_QUEUE = env.str("HTTP_CACHE_PURGE_QUEUE", default="")
# The sweeper sends again, every this many seconds, purges not confirmed (lost tasks).
HTTP_CACHE_PURGE_SWEEP_EVERY = env.int("HTTP_CACHE_PURGE_SWEEP_EVERY", default=30)

# --- Celery -----------------------------------------------------------------------------
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    # A task taken but never acknowledged (its worker was killed) is delivered again after
    # this many seconds. Keep it above every task's time limit: a task still running past
    # it is delivered a second time. Workers look for such tasks every tenth of it (at
    # most every 100 s, kombu's default period; at least every second), one worker at a
    # time: under a lock in Redis that a worker killed while holding it keeps for
    # `unacked_mutex_expire` (kombu: 300 s), so it lasts a tenth of the timeout too (at
    # least 5 s: a look takes milliseconds, and a message is never handed out twice
    # anyway, as kombu moves it back in a transaction).
    _visibility_timeout = env.int("CELERY_VISIBILITY_TIMEOUT", default=3600)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "visibility_timeout": _visibility_timeout,
        "unacked_restore_interval": max(1, min(100, _visibility_timeout // 10)),
        "unacked_restore_throttle": 1,
        "unacked_mutex_expire": max(5, min(300, _visibility_timeout // 10)),
    }
else:
    # Zero-config broker: kombu's file-system transport, consumed by a real worker process.
    _broker_dir = VAR_DIR / "broker"
    for _sub in ("queue", "processed", "control"):
        (_broker_dir / _sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_URL = "filesystem://"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir / "queue"),
        "data_folder_out": str(_broker_dir / "queue"),
        "processed_folder": str(_broker_dir / "processed"),
        "control_folder": str(_broker_dir / "control"),
        "store_processed": False,
        "polling_interval": 0.1,
    }
CELERY_TASK_ALWAYS_EAGER = _bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SOFT_TIME_LIMIT = 120
CELERY_TASK_TIME_LIMIT = 180
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
CELERY_BEAT_SCHEDULER = "curation.celery:BeatScheduler"
CELERY_WORKER_CONSUMER = "curation.celery:Consumer"  # no event heartbeats: see there
CELERY_TIMEZONE = "UTC"

# --- Auth, i18n, static -----------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = Path(env.str("STATIC_ROOT", default=str(VAR_DIR / "static")))
STATICFILES_DIRS = [BASE_DIR / "static"]
# Stored thumbnails (summaries/thumbnails): files under var/media by default, served by
# this site (curation/urls.py); THUMBNAIL_STORAGE_BACKEND names any django-storages backend
# instead (its options in THUMBNAIL_STORAGE_OPTIONS, JSON), and MEDIA_URL then its address.
MEDIA_ROOT = Path(env.str("MEDIA_ROOT", default=str(VAR_DIR / "media")))
MEDIA_URL = env.str("MEDIA_URL", default="/media/")


def _media_origin(url: str) -> list[str]:
    """The origin of an absolute MEDIA_URL (a storage's own host) for img-src; none if local."""
    scheme, _, rest = url.partition("://")
    return [f"{scheme}://{rest.split('/', 1)[0]}"] if rest else []


STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": env.str(
            "STATICFILES_BACKEND",
            default="whitenoise.storage.CompressedManifestStaticFilesStorage",
        )
    },
    "thumbnails": {
        "BACKEND": env.str(
            "THUMBNAIL_STORAGE_BACKEND", default="django.core.files.storage.FileSystemStorage"
        ),
        "OPTIONS": env.json("THUMBNAIL_STORAGE_OPTIONS", default={}),
    },
    # The evidence vault (summaries/checking/evidence.py): WARC records of cited pages,
    # under var/evidence by default (never served by the site); any django-storages backend
    # instead, its options in EVIDENCE_STORAGE_OPTIONS (JSON).
    "evidence": {
        "BACKEND": env.str(
            "EVIDENCE_STORAGE_BACKEND", default="django.core.files.storage.FileSystemStorage"
        ),
        "OPTIONS": env.json(
            "EVIDENCE_STORAGE_OPTIONS", default={"location": str(VAR_DIR / "evidence")}
        ),
    },
}

LOGIN_URL = "admin:login"

# --- Security ---------------------------------------------------------------------------
SECURE_PROXY_SSL_HEADER = (
    ("HTTP_X_FORWARDED_PROTO", "https") if _bool("BEHIND_TLS_PROXY", False) else None
)
SECURE_SSL_REDIRECT = _bool("SECURE_SSL_REDIRECT", not DEBUG)
SESSION_COOKIE_SECURE = _bool("SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = _bool("CSRF_COOKIE_SECURE", not DEBUG)
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=0 if DEBUG else 31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = _bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", not DEBUG)
SECURE_HSTS_PRELOAD = _bool("SECURE_HSTS_PRELOAD", not DEBUG)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "strict-origin-when-cross-origin"
X_FRAME_OPTIONS = "DENY"
# Reader pages run no inline script and load nothing from elsewhere.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        # Images come from this site or the thumbnails' storage, never from a video platform.
        "img-src": ["'self'", "data:", *_media_origin(MEDIA_URL)],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "frame-ancestors": ["'none'"],
        # The click-to-load player of the summary and transcript pages
        # (static/summaries/js/player.js).
        "frame-src": ["https://www.youtube-nocookie.com"],
        "form-action": ["'self'"],
    },
}
# The admin's pages (summaries/ops/csp.py): the same, but inline styles, which widgets of
# the admin and of its add-ons may write; scripts still come only from this site.
CONTENT_SECURITY_POLICY_ADMIN = {
    "DIRECTIVES": {
        **CONTENT_SECURITY_POLICY["DIRECTIVES"],
        "style-src": ["'self'", "'unsafe-inline'"],
    },
}
SESSION_COOKIE_HTTPONLY = True
DATA_UPLOAD_MAX_MEMORY_SIZE = 2_621_440
# Largest transcript file an editor imports (admin upload or API), in bytes: a 413 above it.
TRANSCRIPT_MAX_BYTES = env.int("TRANSCRIPT_MAX_BYTES", default=20 * 1024 * 1024)
# Most words said a transcript may have (250,000: about 24 hours of speech): a 400 above it,
# refused while the file is read, so that an import stays well inside a web worker's timeout.
TRANSCRIPT_MAX_WORDS = env.int("TRANSCRIPT_MAX_WORDS", default=250_000)

# One line per request (curation.request) and per task (curation.task), with the request
# id, task id and check batch they belong to (summaries/ops/logs.py); LOG_FORMAT=json writes
# one JSON object per line. Django's and Celery's lines that repeat these: errors only.
LOG_FORMAT = env.str("LOG_FORMAT", default="text")
if LOG_FORMAT not in ("text", "json"):
    raise ImproperlyConfigured(f"LOG_FORMAT must be text or json, got {LOG_FORMAT!r}.")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {
        "context": {"()": "summaries.ops.logs.ContextFilter"},
        "refused_requests": {"()": "summaries.ops.logs.RefusedRequestFilter"},
    },
    "formatters": {
        "text": {"()": "summaries.ops.logformat.TextFormatter"},
        "json": {"()": "summaries.ops.logformat.JsonFormatter"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": LOG_FORMAT,
            "filters": ["context", "refused_requests"],
        }
    },
    "loggers": {
        "django.request": {"level": "ERROR"},
        # Celery's "received" and "succeeded" lines repeat curation.task's; failures stay.
        "celery.app.trace": {"level": "WARNING"},
        "celery.worker.strategy": {"level": "WARNING"},
    },
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
}
# The worker keeps this configuration (Celery would replace the root handler with its own).
CELERY_WORKER_HIJACK_ROOT_LOGGER = False

# --- Metrics (summaries/ops/metrics.py) ---------------------------------------------------
# /metrics answers a bearer token equal to METRICS_TOKEN, or peers (REMOTE_ADDR) in
# METRICS_ALLOWED_NETWORKS (CIDRs); anyone else gets a 404. Neither set: closed.
METRICS_TOKEN = env.str("METRICS_TOKEN", default="")
METRICS_ALLOWED_NETWORKS = env.list("METRICS_ALLOWED_NETWORKS", default=[])
# The Celery worker's own endpoint for the counts made in its processes (0: off).
METRICS_WORKER_PORT = env.int("METRICS_WORKER_PORT", default=0)
METRICS_WORKER_ADDR = env.str("METRICS_WORKER_ADDR", default="127.0.0.1")

# --- REST API ---------------------------------------------------------------------------
# The client API under /api/v1/ (summaries/api/). Everything that is set once for all its
# views lives here: authentication, permissions, parsing limits, pagination, throttling and
# error rendering; CORS opens the read endpoints only to the configured origins.
API_PAGE_SIZE = env.int("API_PAGE_SIZE", default=20)
API_MAX_PAGE_SIZE = 100
# Request bodies above this size get a 413; JSON nested deeper than API_MAX_JSON_DEPTH a 400.
API_MAX_BODY_BYTES = env.int("API_MAX_BODY_BYTES", default=DATA_UPLOAD_MAX_MEMORY_SIZE)
API_MAX_JSON_DEPTH = 20
# What browsers and shared caches may keep an anonymous read for, in seconds.
API_CACHE_MAX_AGE = env.int("API_CACHE_MAX_AGE", default=60)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Token first: a 401 then names the Token scheme in WWW-Authenticate.
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["summaries.api.permissions.ReadOrEditorWrite"],
    "DEFAULT_PARSER_CLASSES": ["summaries.api.parsers.BoundedJSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PAGINATION_CLASS": "summaries.api.pagination.CursorPagination",
    "PAGE_SIZE": API_PAGE_SIZE,
    "DEFAULT_FILTER_BACKENDS": ["summaries.api.filters.FilterBackend"],
    "DEFAULT_THROTTLE_CLASSES": [
        "summaries.api.throttling.AnonThrottle",
        "summaries.api.throttling.UserThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "anon": env.str("API_THROTTLE_ANON", default="300/minute"),
        "user": env.str("API_THROTTLE_USER", default="3000/minute"),
    },
    # Behind a proxy the client address is the proxy's last X-Forwarded-For entry; without
    # one, X-Forwarded-For is ignored (a client could otherwise pick its throttle identity).
    "NUM_PROXIES": env.int("API_NUM_PROXIES", default=1 if SECURE_PROXY_SSL_HEADER else 0),
    "EXCEPTION_HANDLER": "summaries.api.errors.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "summaries.api.schema.ApiAutoSchema",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Curation API",
    "DESCRIPTION": (
        "Curated summaries of AI videos. Anonymous clients read published summaries; editors "
        "(token or session) also read drafts and write whole summaries. Errors share one "
        'shape: `{"error": {"status", "code", "message", "fields"}}`.'
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "SCHEMA_PATH_PREFIX": r"/api/v1",
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "LanguageEnum": "summaries.models.LANGUAGE_CHOICES",
        "SummaryStatusEnum": "summaries.models.Summary.Status",
        "SourceStateEnum": "summaries.models.Source.State",
        "CitationVerdictEnum": "summaries.models.Citation.Verdict",
        "PinStatusEnum": "summaries.api.pin_serializers.PIN_STATUSES",
        "PartKindEnum": "summaries.api.schema.PART_KIND_CHOICES",
        "TranscriptStateEnum": "summaries.models.Transcript.State",
        "ChangeKindEnum": "summaries.models.Correction.Kind",
    },
}

CORS_URLS_REGEX = r"^/api/(v1|schema)/"
CORS_ALLOWED_ORIGINS = env.list("API_CORS_ALLOWED_ORIGINS", default=[])
# Read endpoints only: a browser on another origin cannot send a write (no preflight passes).
CORS_ALLOW_METHODS = ["GET", "HEAD", "OPTIONS"]
CORS_ALLOW_HEADERS = ["accept", "accept-language", "if-none-match", "if-modified-since"]
CORS_EXPOSE_HEADERS = ["ETag", "Last-Modified", "Retry-After"]
CORS_ALLOW_CREDENTIALS = False
CORS_PREFLIGHT_MAX_AGE = 3600

# --- Source checking --------------------------------------------------------------------
# The link checker (summaries/linkcheck, summaries/checking). Only public
# addresses are contacted, on the scheme's own port (80 for http, 443 for https);
# FETCH_ALLOWED_NETWORKS (comma-separated CIDRs, e.g. 127.0.0.2/31 for tests or an intranet
# range) opens those ranges on any port.
FETCH_ALLOWED_NETWORKS = env.list("FETCH_ALLOWED_NETWORKS", default=[])
# Off: nothing outside FETCH_ALLOWED_NETWORKS is contacted by any outbound request (source
# checks, thumbnails, the web archive, webhooks), and names are looked up in /etc/hosts
# only, so no query goes to a DNS server either (a closed network; the test suite).
FETCH_PUBLIC = _bool("FETCH_PUBLIC", True)
FETCH_USER_AGENT = env.str(
    "FETCH_USER_AGENT",
    default="curation-linkcheck/1.0 (source checker for curated summaries)",
)
FETCH_DEADLINE = env.float("FETCH_DEADLINE", default=10.0)  # seconds for a whole fetch
FETCH_MAX_BODY = env.int("FETCH_MAX_BODY", default=2_000_000)  # decoded bytes
FETCH_PER_HOST = env.int("FETCH_PER_HOST", default=2)  # in flight per host, all workers
FETCH_MAX_IN_FLIGHT = env.int("FETCH_MAX_IN_FLIGHT", default=64)  # per worker process
# Sources per check task: a batch ends with its slowest fetch (up to FETCH_DEADLINE), so
# large batches keep a worker's slots busy (bench/LINKCHECK.md).
FETCH_BATCH_SIZE = env.int("FETCH_BATCH_SIZE", default=2000)
# Healthy sources are checked again after this many seconds; broken, unverifiable, erring
# and changed ones (a claim no longer found or the page changed) sooner.
CHECK_INTERVAL_HEALTHY = env.int("CHECK_INTERVAL_HEALTHY", default=7 * 24 * 3600)
CHECK_INTERVAL_PROBLEM = env.int("CHECK_INTERVAL_PROBLEM", default=24 * 3600)
# A claimed source not recorded within this many seconds is claimed again by the sweeper
# (its batch was lost: broker down at save time, or a worker killed). Longer than the
# check task's hard time limit.
CHECK_CLAIM_SECONDS = env.int("CHECK_CLAIM_SECONDS", default=15 * 60)
CHECK_HISTORY_PER_SOURCE = env.int("CHECK_HISTORY_PER_SOURCE", default=20)
# Stored "Related" lists: recompute this many missing or day-old lists per beat tick.
RELATED_REFRESH_BATCH = env.int("RELATED_REFRESH_BATCH", default=200)
RELATED_REFRESH_EVERY = env.int("RELATED_REFRESH_EVERY", default=600)
# Changes to live summaries scheduled for a time go live within this many seconds of it.
PUBLISH_CHANGES_EVERY = env.int("PUBLISH_CHANGES_EVERY", default=60)
# Due sources are claimed and queued in batches every this many seconds.
CHECK_DISPATCH_EVERY = env.int("CHECK_DISPATCH_EVERY", default=300)
# --- Web archive: captures of cited pages, archived copies of failed ones ------------------
# The archive's base address: Save Page Now 2 (POST /save, GET /save/status/<job>), the CDX
# index (/cdx/search/cdx) and its copies (/web/<timestamp>/<url>) are found under it.
ARCHIVE_ENDPOINT = env.str("ARCHIVE_ENDPOINT", default="https://web.archive.org").rstrip("/")
# Save Page Now keys ("Authorization: LOW key:secret"); without them captures are anonymous.
ARCHIVE_ACCESS_KEY = env.str("ARCHIVE_ACCESS_KEY", default="")
ARCHIVE_SECRET_KEY = env.str("ARCHIVE_SECRET_KEY", default="")
# Ask the archive to capture cited pages whose claim a check found (at most once per
# ARCHIVE_RECAPTURE_DAYS each), and look up copies of pages that died or lost their claim.
ARCHIVE_CAPTURE = env.bool("ARCHIVE_CAPTURE", default=True)
ARCHIVE_LOOKUP = env.bool("ARCHIVE_LOOKUP", default=True)
ARCHIVE_RECAPTURE_DAYS = env.int("ARCHIVE_RECAPTURE_DAYS", default=90)
# Capture requests sent, all workers together: N/s, N/m or N/h.
ARCHIVE_CAPTURE_RATE = env.str("ARCHIVE_CAPTURE_RATE", default="12/m")
# Hosts never sent to the archive (a host covers its subdomains), comma-separated.
ARCHIVE_OPT_OUT_HOSTS = env.list("ARCHIVE_OPT_OUT_HOSTS", default=[])
# Capture requests refused (429, 5xx, network) are tried again up to this many times.
ARCHIVE_MAX_ATTEMPTS = env.int("ARCHIVE_MAX_ATTEMPTS", default=5)
# A capture's status is asked every ARCHIVE_POLL_SECONDS, at most ARCHIVE_MAX_POLLS times.
ARCHIVE_POLL_SECONDS = env.float("ARCHIVE_POLL_SECONDS", default=20.0)
ARCHIVE_MAX_POLLS = env.int("ARCHIVE_MAX_POLLS", default=30)
# Seconds one request to the archive may take.
ARCHIVE_DEADLINE = env.float("ARCHIVE_DEADLINE", default=30.0)
# Copies tried per look-up (the newest before the citation was confirmed first), and days
# before a citation whose look-up found nothing is looked up again.
ARCHIVE_LOOKUP_CANDIDATES = env.int("ARCHIVE_LOOKUP_CANDIDATES", default=5)
ARCHIVE_LOOKUP_AGAIN_DAYS = env.int("ARCHIVE_LOOKUP_AGAIN_DAYS", default=7)
# --- Webhooks ----------------------------------------------------------------------------
# Where the site is: every absolute link starts with it (pages, feeds, oEmbed, the API,
# e-mails, webhook bodies), never the request's scheme or Host, which a client chooses.
SITE_URL = env.str("SITE_URL", default="http://localhost:8000").rstrip("/")
# Deliveries go out through the source checker's address rules: public addresses only, on
# the scheme's own port, unless a network is allowed here (comma-separated CIDRs).
WEBHOOK_ALLOWED_NETWORKS = env.list("WEBHOOK_ALLOWED_NETWORKS", default=[])
WEBHOOK_DEADLINE = env.float("WEBHOOK_DEADLINE", default=10.0)  # seconds for one attempt
# A failed attempt (5xx, 408/425/429, timeout, network) is tried again after a wait that
# starts at WEBHOOK_RETRY_DELAY seconds and doubles (with jitter) up to WEBHOOK_MAX_RETRY_DELAY,
# at most WEBHOOK_MAX_ATTEMPTS attempts in all (defaults: ~2 hours of trying).
WEBHOOK_MAX_ATTEMPTS = env.int("WEBHOOK_MAX_ATTEMPTS", default=8)
WEBHOOK_RETRY_DELAY = env.float("WEBHOOK_RETRY_DELAY", default=30.0)
WEBHOOK_MAX_RETRY_DELAY = env.float("WEBHOOK_MAX_RETRY_DELAY", default=3600.0)
# An endpoint whose deliveries failed this many times in a row (each after all its
# attempts) is disabled until an editor turns it on again.
WEBHOOK_DISABLE_AFTER = env.int("WEBHOOK_DISABLE_AFTER", default=10)
# Events (and their delivery logs) are kept this many days.
WEBHOOK_KEEP_DAYS = env.int("WEBHOOK_KEEP_DAYS", default=30)
# After a secret is rotated, deliveries are signed with the old secret too for this many
# seconds (receivers switch meanwhile); then with the new one only.
WEBHOOK_SECRET_OVERLAP = env.int("WEBHOOK_SECRET_OVERLAP", default=24 * 3600)
# The sweeper, every WEBHOOK_SWEEP_EVERY seconds: queues deliveries whose message was lost,
# marks those whose worker died mid-request "interrupted", and queues the announcement of
# each scheduled summary going live in the next two periods for its publish time (a task
# with that ETA), so that "summary.published" leaves when it goes live rather than at the
# next sweep; a summary whose announcement was lost is told by the first sweep after.
WEBHOOK_SWEEP_EVERY = env.int("WEBHOOK_SWEEP_EVERY", default=60)
# --- E-mail and notifications ------------------------------------------------------------
# Django's mail framework. EMAIL_URL (smtp://USER:PASSWORD@HOST:587, smtp+tls://…,
# smtps://… for implicit TLS, consolemail://) wins; else EMAIL_HOST and its companions
# select SMTP; else mail is printed to the console, so a fresh clone needs no mail server.
_email_url = env.str("EMAIL_URL", default="")
EMAIL_HOST = env.str("EMAIL_HOST", default="")
if _email_url:
    try:
        globals().update(env.email_url_config(_email_url))
    except Exception as exc:  # django-environ raises several kinds on a malformed URL
        raise ImproperlyConfigured(f"EMAIL_URL is invalid: {exc}") from exc
elif EMAIL_HOST:
    EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    EMAIL_HOST_USER = env.str("EMAIL_HOST_USER", default="")
    EMAIL_HOST_PASSWORD = env.str("EMAIL_HOST_PASSWORD", default="")
    # STARTTLS unless implicit TLS is asked for: Django refuses both at once.
    EMAIL_USE_SSL = _bool("EMAIL_USE_SSL", False)
    EMAIL_USE_TLS = _bool("EMAIL_USE_TLS", not EMAIL_USE_SSL)
    EMAIL_PORT = env.int("EMAIL_PORT", default=465 if EMAIL_USE_SSL else 587)
else:
    EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"
# Seconds an SMTP connection may block (the notification task's time limit follows it).
EMAIL_TIMEOUT = env.int("EMAIL_TIMEOUT", default=10)
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="Curation <curation@localhost>")
SERVER_EMAIL = env.str("SERVER_EMAIL", default=DEFAULT_FROM_EMAIL)
EMAIL_SUBJECT_PREFIX = env.str("EMAIL_SUBJECT_PREFIX", default="[Curation] ")
# Attempts at e-mailing one notification while the mail server cannot be reached or
# answers 4xx (nothing sent); then it is marked failed (the inbox still has it).
NOTIFICATION_EMAIL_MAX_ATTEMPTS = env.int("NOTIFICATION_EMAIL_MAX_ATTEMPTS", default=4)
# Notifications (read or not) are kept this many days.
NOTIFICATION_KEEP_DAYS = env.int("NOTIFICATION_KEEP_DAYS", default=180)
# The sweeper: tells of scheduled summaries that went live, queues e-mails whose message
# was lost and marks those whose worker died mid-send "interrupted" (never sent twice).
NOTIFICATION_SWEEP_EVERY = env.int("NOTIFICATION_SWEEP_EVERY", default=60)
# Password resets from the admin login page, per client address and per e-mail address
# asked for (django-ratelimit rates: N/s, N/m, N/h or N/d); past either, a 429.
PASSWORD_RESET_RATE_IP = env.str("PASSWORD_RESET_RATE_IP", default="10/h")
PASSWORD_RESET_RATE_EMAIL = env.str("PASSWORD_RESET_RATE_EMAIL", default="3/h")
# A reset link works this many seconds (Django's default is 3 days).
PASSWORD_RESET_TIMEOUT = env.int("PASSWORD_RESET_TIMEOUT", default=3600)
# --- Following by e-mail (summaries/following) ----------------------------------------------
# A confirmation link works this many seconds; no second confirmation goes to an address
# within FOLLOW_CONFIRM_RESEND_AFTER seconds of the last.
FOLLOW_CONFIRM_MAX_AGE = env.int("FOLLOW_CONFIRM_MAX_AGE", default=3 * 24 * 3600)
FOLLOW_CONFIRM_RESEND_AFTER = env.int("FOLLOW_CONFIRM_RESEND_AFTER", default=3600)
# The "manage your follows" link of a message works this many seconds (unsubscribe links
# always work).
FOLLOW_MANAGE_MAX_AGE = env.int("FOLLOW_MANAGE_MAX_AGE", default=90 * 24 * 3600)
# Sign-ups per client address and per e-mail address (django-ratelimit rates); past
# either, a 429.
FOLLOW_RATE_IP = env.str("FOLLOW_RATE_IP", default="20/h")
FOLLOW_RATE_EMAIL = env.str("FOLLOW_RATE_EMAIL", default="5/h")
# Digests: the beat task runs every FOLLOW_DIGEST_EVERY seconds ("as soon as published"
# follows get theirs then); daily and weekly digests (Mondays) leave from FOLLOW_DIGEST_HOUR
# (UTC) on. Messages go FOLLOW_DIGEST_BATCH at a time over one SMTP connection.
FOLLOW_DIGEST_EVERY = env.int("FOLLOW_DIGEST_EVERY", default=120)
FOLLOW_DIGEST_HOUR = env.int("FOLLOW_DIGEST_HOUR", default=7)
FOLLOW_DIGEST_BATCH = env.int("FOLLOW_DIGEST_BATCH", default=100)
# An address that has followed nothing (every follow ended, or never confirmed) for this
# many seconds is deleted, with its follows (beat, hourly); until then its manage link
# can follow again.
FOLLOW_FORGET_AFTER = env.int("FOLLOW_FORGET_AFTER", default=30 * 24 * 3600)
# Thumbnails still missing (a fetch that failed for a while, or was lost) are queued again:
# at most THUMBNAIL_SWEEP_BATCH a run, each after a wait that doubles with each failure.
THUMBNAIL_SWEEP_BATCH = env.int("THUMBNAIL_SWEEP_BATCH", default=100)
THUMBNAIL_SWEEP_EVERY = env.int("THUMBNAIL_SWEEP_EVERY", default=900)
# The evidence vault: a check that finds a citation's key phrase keeps the response as a
# WARC record, once per payload. Caps in bytes stored (gzipped): per record, per source, in
# all; past one, the citation's evidence says which cap was hit and nothing is written.
# Records no citation relies on any more are deleted EVIDENCE_RETENTION_DAYS after their
# last use (beat, daily).
EVIDENCE_ENABLED = _bool("EVIDENCE_ENABLED", True)
EVIDENCE_MAX_RECORD_BYTES = env.int("EVIDENCE_MAX_RECORD_BYTES", default=3_000_000)
EVIDENCE_MAX_SOURCE_BYTES = env.int("EVIDENCE_MAX_SOURCE_BYTES", default=20_000_000)
EVIDENCE_MAX_TOTAL_BYTES = env.int("EVIDENCE_MAX_TOTAL_BYTES", default=20_000_000_000)
EVIDENCE_RETENTION_DAYS = env.int("EVIDENCE_RETENTION_DAYS", default=90)


# --- Celery beat: every periodic task, in one place ----------------------------------------
def _every(seconds: int, task: str) -> dict:
    """A beat entry: `task` every `seconds`; a tick not started by the next one is dropped
    (expires), so a worker back from an outage does not run a backlog of the same sweep."""
    return {
        "task": f"summaries.tasks.{task}",
        "schedule": seconds,
        "options": {"expires": max(1, seconds - 10)},
    }


CELERY_BEAT_SCHEDULE = {
    "dispatch-source-checks": _every(CHECK_DISPATCH_EVERY, "dispatch_source_checks"),
    "publish-due-changes": _every(PUBLISH_CHANGES_EVERY, "publish_due_changes"),
    "refresh-stale-related": _every(RELATED_REFRESH_EVERY, "refresh_stale_related"),
    "sweep-webhooks": _every(WEBHOOK_SWEEP_EVERY, "sweep_webhooks"),
    "sweep-notifications": _every(NOTIFICATION_SWEEP_EVERY, "sweep_notifications"),
    "sweep-thumbnails": _every(THUMBNAIL_SWEEP_EVERY, "sweep_thumbnails"),
    "send-digests": _every(FOLLOW_DIGEST_EVERY, "send_digests"),
    "forget-unfollowed-addresses": _every(3600, "forget_unfollowed_addresses"),
    "sweep-archive-captures": _every(3600, "sweep_archive_captures"),
    "sweep-evidence": _every(24 * 3600, "sweep_evidence"),
    "sweep-cache-purges": _every(HTTP_CACHE_PURGE_SWEEP_EVERY, "sweep_cache_purges"),
}
