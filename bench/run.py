"""Speed benchmark: every skill at 1k to 100k rows, against naive ORM and SQL.

    .venv/bin/python bench/run.py [--sizes 1k,10k,50k,100k] [--quick] [--reps 30]
                                  [--no-http] [--no-people] [--only TEXT]

For each data size (a household of N contacts and N members + leads, all sizes
side by side in one database) and each skill question it reports p50 and p95
latency through the production server (granian) on 127.0.0.1 (HTTP) and
in-process through Django and DRF (the test client: middleware, token check,
throttle, skill, card, JSON), SELECTs per call and bytes per response. The same
questions are answered by the naive ORM code a Django developer writes first
and by the bare SQL of our own queries through psycopg; `ours` in those ratios
is the skill function itself (validation, queries, output serializer, JSON),
the level the other two work at. EXPLAIN (ANALYZE) of each question's queries
says which index served it. With 100k, bench/people.py adds people search at
scale.
Results: bench/results/bench.{md,json} and bench/results/p95.png.
"""

import argparse
import json
import math
import os
import platform
import random
import secrets
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from functools import reduce
from operator import or_
from pathlib import Path
from statistics import mean
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
# The production settings of docs/operations.md, with rate limits out of reach.
os.environ.setdefault("DJANGO_DEBUG", "0")
os.environ.setdefault("DJANGO_SECRET_KEY", secrets.token_urlsafe(40))
os.environ.setdefault("DJANGO_ALLOWED_HOSTS", "127.0.0.1,testserver")
os.environ.setdefault("DJANGO_SECURE_SSL_REDIRECT", "0")
os.environ.setdefault("YORIK_API_RATE", "1000000/min")
# As the server's run: no log line per MCP call (django_mcpz.calls logs at INFO).
os.environ.setdefault("YORIK_LOG_LEVEL", "WARNING")
from bench.django_setup import ROOT, setup

setup()

import django  # noqa: E402
import psycopg  # noqa: E402
import requests  # noqa: E402
from django.conf import settings  # noqa: E402
from django.contrib.postgres.search import TrigramSimilarity  # noqa: E402
from django.core.serializers.json import DjangoJSONEncoder  # noqa: E402
from django.db import connection  # noqa: E402
from django.db.models import Q, QuerySet  # noqa: E402
from django.db.models.functions import Greatest  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from django.utils import timezone  # noqa: E402
from rest_framework import serializers  # noqa: E402
from rest_framework.settings import api_settings  # noqa: E402

from bench.generate import TEMPLATE_ID, ensure_household  # noqa: E402
from bench.names_data import VARIANT_FAMILIES  # noqa: E402
from bench.servers import (  # noqa: E402
    LOOPBACK_PRODUCTION,
    free_port,
    start_server,
)
from compose.models import LetterTemplate  # noqa: E402
from contacts.models import (  # noqa: E402
    Address,
    ChannelKind,
    Contact,
    ContactChannel,
    ContactStatus,
    PaperlessCorrespondent,
)
from contacts.providers.categories import get_category  # noqa: E402
from household.callers import MemberCaller  # noqa: E402
from household.models import (  # noqa: E402
    CalendarEvent,
    Household,
    Lead,
    Membership,
    UserProfile,
)
from people_search.engine.phones import format_phone, phone_query_digits  # noqa: E402
from people_search.index.similar import vocabulary_size  # noqa: E402
from yorik.database import ensure_server  # noqa: E402
from yorik.registry import get_skill  # noqa: E402
from yorik.serializers import output_writer, validated_inputs  # noqa: E402
from yorik.tokens import issue_token, revoke_tokens  # noqa: E402

RESULTS = ROOT / "bench" / "results"
SIZES = {"1k": 1_000, "10k": 10_000, "50k": 50_000, "100k": 100_000}
SAMPLES = 20
WARMUP = 3
# Slow questions get fewer repetitions: about this many seconds per method.
SECONDS_PER_METHOD = 8.0
MIN_REPS = 8
# What people search's similar-name lane searches.
# A skill call slower than this is timed once and not sent over HTTP.
SLOW_CALL_MS = 10_000
# See read_plans.
WARN_FROM_ROWS = 50_000
SEQ_SCAN_ROWS = 10_000

Inputs = dict[str, Any]


@dataclass
class Question:
    key: str
    skill: str
    inputs: list[Inputs]
    naive: Callable[[Household, Inputs], Any]
    # Indexes that show the question is served as designed.
    expected: frozenset[str]


@dataclass
class Timing:
    samples: list[float] = field(default_factory=list)

    @property
    def p50(self) -> float:
        return percentile(self.samples, 50)

    @property
    def p95(self) -> float:
        return percentile(self.samples, 95)

    def as_dict(self) -> dict[str, float]:
        return {"p50_ms": round(self.p50, 2), "p95_ms": round(self.p95, 2)}


def percentile(samples: Sequence[float], p: float) -> float:
    """Return the nearest-rank percentile of the samples."""
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def measure(call: Callable[[Inputs], Any], inputs: list[Inputs], reps: int) -> Timing:
    """Time `call` in milliseconds, cycling through the inputs, after a warm-up."""
    started = time.perf_counter()
    for index in range(WARMUP):
        call(inputs[index % len(inputs)])
    per_call = (time.perf_counter() - started) / WARMUP
    reps = max(MIN_REPS, min(reps, int(SECONDS_PER_METHOD / max(per_call, 1e-6))))
    timing = Timing()
    for index in range(reps):
        started = time.perf_counter()
        call(inputs[index % len(inputs)])
        timing.samples.append((time.perf_counter() - started) * 1000)
    return timing


def count_selects(call: Callable[[], Any]) -> tuple[int, list[str]]:
    """Return how many SELECTs one call runs, and every statement it ran."""
    with CaptureQueriesContext(connection) as captured:
        call()
    statements = [query["sql"] for query in captured.captured_queries]
    return sum(is_select(sql) for sql in statements), statements


def is_select(sql: str) -> bool:
    return sql.lstrip().upper().startswith(("SELECT", "WITH", "(SELECT"))


def replayable(statements: Sequence[str]) -> list[str]:
    return [
        sql for sql in statements if is_select(sql) or sql.lstrip().startswith("SET")
    ]


def to_json(data: Any) -> bytes:
    """Write an answer as the API does, with its JSON renderer."""
    return api_settings.DEFAULT_RENDERER_CLASSES[0]().render(data)


# The naive answers: what a Django developer writes first.


class NaiveChannelSerializer(serializers.ModelSerializer):
    class Meta:
        model = ContactChannel
        fields = ["kind", "value", "label"]


class NaiveAddressSerializer(serializers.ModelSerializer):
    class Meta:
        model = Address
        fields = ["kind", "line1", "line2", "postcode", "city", "country"]


class NaiveContactSerializer(serializers.ModelSerializer):
    channels = NaiveChannelSerializer(many=True)
    addresses = NaiveAddressSerializer(many=True)

    class Meta:
        model = Contact
        fields = ["id", "display_name", "relation", "kind", "channels", "addresses"]


class NaiveContactBriefSerializer(serializers.ModelSerializer):
    class Meta:
        model = Contact
        fields = ["id", "display_name", "relation", "kind"]


class NaiveProfileSerializer(serializers.ModelSerializer):
    class Meta:
        model = UserProfile
        fields = ["id", "first_name", "last_name", "email", "phone"]


class NaiveMemberSerializer(serializers.ModelSerializer):
    profile = NaiveProfileSerializer()

    class Meta:
        model = Membership
        fields = ["id", "role", "status", "profile"]


class NaiveLeadSerializer(serializers.ModelSerializer):
    class Meta:
        model = Lead
        fields = ["id", "first_name", "last_name", "email", "phone", "status"]


def _live_contacts(household: Household) -> QuerySet[Contact]:
    return Contact.objects.filter(household=household).exclude(
        status__in=[ContactStatus.SPAM, ContactStatus.ARCHIVED]
    )


def _any_icontains(fields: Sequence[str], term: str) -> Q:
    return reduce(or_, (Q(**{f"{name}__icontains": term}) for name in fields))


CONTACT_FIELDS = (
    "display_name",
    "first_name",
    "last_name",
    "aliases__name",
    "relation",
    "channels__value",
)
PROFILE_FIELDS = ("profile__first_name", "profile__last_name", "profile__email")


def naive_find_person(household: Household, inputs: Inputs) -> dict[str, Any]:
    contacts = _live_contacts(household)
    members = Membership.objects.live(household=household).select_related("profile")
    for term in inputs.get("query", "").split():
        contacts = contacts.filter(_any_icontains(CONTACT_FIELDS, term))
        members = members.filter(_any_icontains(PROFILE_FIELDS, term))
    if "channel_value" in inputs:
        e164 = "+" + phone_query_digits(
            inputs["channel_value"], household.default_region
        )
        contacts = contacts.filter(
            channels__kind=ChannelKind.PHONE, channels__value__icontains=e164
        )
    contacts = contacts.distinct().order_by("display_name")
    found = NaiveContactSerializer(
        contacts.prefetch_related("channels", "addresses")[:10], many=True
    ).data
    result = {"contacts": found, "contact_count": contacts.count()}
    if inputs.get("source", "auto") == "auto":
        result["members"] = NaiveMemberSerializer(
            members.distinct().order_by("profile__first_name")[:10], many=True
        ).data
    return result


def naive_browse(household: Household, inputs: Inputs) -> list[dict]:
    return NaiveContactBriefSerializer(
        _live_contacts(household).order_by("display_name"), many=True
    ).data


def naive_people_search(household: Household, inputs: Inputs) -> dict[str, Any]:
    query = inputs["query"]
    digits = phone_query_digits(query, household.default_region)
    members = Membership.objects.live(household=household).select_related("profile")
    leads = Lead.objects.filter(household=household)
    if digits:
        members = members.filter(profile__phone__contains=digits)
        leads = leads.filter(phone__contains=digits)
    else:
        for term in query.split():
            members = members.filter(_any_icontains(PROFILE_FIELDS, term))
            leads = leads.filter(
                _any_icontains(("first_name", "last_name", "email"), term)
            )
    return {
        "members": NaiveMemberSerializer(
            members.order_by("profile__first_name")[:8], many=True
        ).data,
        "leads": NaiveLeadSerializer(leads.order_by("first_name")[:8], many=True).data,
    }


def naive_similar_people(household: Household, inputs: Inputs) -> dict[str, Any]:
    """Similar names the way the pg_trgm docs suggest: similarity() on every row."""
    query = inputs["query"]

    def similar(queryset: QuerySet, prefix: str) -> QuerySet:
        return (
            queryset.annotate(
                similarity=Greatest(
                    TrigramSimilarity(f"{prefix}first_name", query),
                    TrigramSimilarity(f"{prefix}last_name", query),
                )
            )
            .filter(similarity__gt=0.3)
            .order_by("-similarity")[:8]
        )

    return {
        "members": NaiveMemberSerializer(
            similar(
                Membership.objects.live(household=household).select_related("profile"),
                "profile__",
            ),
            many=True,
        ).data,
        "leads": NaiveLeadSerializer(
            similar(Lead.objects.filter(household=household), ""), many=True
        ).data,
    }


def naive_known_provider(household: Household, inputs: Inputs) -> dict[str, Any]:
    category = get_category(inputs["category"])
    words = [category.name_de, category.name_en, *category.keywords[:3]]
    contacts = _live_contacts(household).filter(
        reduce(
            or_,
            (
                Q(display_name__icontains=word) | Q(relation__icontains=word)
                for word in words
            ),
        )
        | Q(tags__overlap=[category.id, category.name_de, category.name_en])
    )
    correspondents = PaperlessCorrespondent.objects.filter(
        Q(household=household)
        & (_any_icontains(["name"], words[0]) | Q(documents__title__icontains=words[0]))
    ).distinct()
    events = CalendarEvent.objects.filter(
        household=household, starts_at__lt=timezone.now()
    ).filter(_any_icontains(["title"], words[0]))
    return {
        "contacts": NaiveContactSerializer(
            contacts.prefetch_related("channels", "addresses"), many=True
        ).data,
        "paperless": [
            {"name": c.name, "documents": c.documents.count()} for c in correspondents
        ],
        "calendar": list(events.values("title", "location", "starts_at")),
    }


def naive_check_recipient(household: Household, inputs: Inputs) -> dict[str, Any]:
    contact = (
        Contact.objects.prefetch_related("addresses")
        .filter(household=household)
        .get(pk=inputs["contact_id"])
    )
    template = LetterTemplate.objects.get(
        household=household, template_id=inputs["template_id"]
    )
    addresses = NaiveAddressSerializer(contact.addresses.all(), many=True).data
    best = next((a for a in addresses if a["line1"] and a["city"]), None)
    return {
        "address": best,
        "missing": [f for f in template.recipient_fields if not (best or {}).get(f)],
        "contact_name": contact.display_name,
    }


# The questions, with inputs drawn from the household's own rows.


def build_questions(household: Household, rng: random.Random) -> list[Question]:
    region = household.default_region
    persons = list(
        Contact.objects.filter(
            household=household, kind="person", status=ContactStatus.ACTIVE
        ).values_list("display_name", flat=True)
    )
    phones = list(
        ContactChannel.objects.filter(
            household=household,
            kind=ChannelKind.PHONE,
            contact__status=ContactStatus.ACTIVE,
        ).values_list("value", flat=True)
    )
    leads = list(
        Lead.objects.filter(household=household).values_list(
            "first_name", "last_name", "phone"
        )
    )
    lead_phones = [phone for _, _, phone in leads if phone]
    contact_ids = list(
        Contact.objects.filter(household=household).values_list("pk", flat=True)
    )
    spellings = [spelling for family in VARIANT_FAMILIES for spelling in family]
    first_names = [first for first, _, _ in leads]

    def sample(items: Sequence[Any]) -> list[Any]:
        return rng.sample(list(items), min(SAMPLES, len(items)))

    partial_phones = []
    for index, e164 in enumerate(sample(lead_phones)):
        national = format_phone(e164, region)
        # Half whole numbers as people write them, half the last digits only.
        partial_phones.append(national if index % 2 else national[-6:])
    indexes = index_names()
    household_indexes = indexes["contact_household_indexes"]
    questions = [
        Question(
            "find_person by name",
            "find_person",
            [{"query": name} for name in sample(persons)],
            naive_find_person,
            frozenset({"contact_search_trgm"}),
        ),
        Question(
            "find_person by phone channel",
            "find_person",
            [
                {
                    "source": "contacts",
                    "channel_kind": "phone",
                    "channel_value": format_phone(e164, region),
                }
                for e164 in sample(phones)
            ],
            naive_find_person,
            frozenset({indexes["channel_lookup"]}),
        ),
        Question(
            "find_person 2 letters",
            "find_person",
            [
                {"query": prefix}
                for prefix in ["an", "mü", "le", "sc", "da", "ko", "be", "el", "ha"]
            ],
            naive_find_person,
            household_indexes,
        ),
        Question(
            "list_contacts_for_picking browse",
            "list_contacts_for_picking",
            [{"pick_to_chat": False}],
            naive_browse,
            household_indexes,
        ),
        Question(
            "people_search by text",
            "people_search",
            [
                {"query": f"{first} {last}" if index % 2 else last}
                for index, (first, last, _) in enumerate(sample(leads))
            ],
            naive_people_search,
            frozenset({"lead_search_trgm"}),
        ),
        Question(
            "people_search by phone",
            "people_search",
            [{"query": phone} for phone in partial_phones],
            naive_people_search,
            frozenset({"lead_phone_trgm"}),
        ),
        Question(
            "people_search by similar name",
            "people_search",
            [
                {
                    "query": f"{rng.choice(first_names)} {spelling}"
                    if i % 2
                    else spelling
                }
                for i, spelling in enumerate(sample(spellings))
            ],
            naive_similar_people,
            # The household's words by embedding (HNSW), or all of them for an
            # exact scan, through either index that holds the household first.
            frozenset({"name_word_hnsw", indexes["word_household"], "name_word_trgm"}),
        ),
        Question(
            "find_known_provider",
            "find_known_provider",
            [
                {"category": category}
                for category in ["dentist", "garage", "hairdresser", "doctor"]
            ],
            naive_known_provider,
            frozenset(
                {
                    "contact_concepts_gin",
                    "contact_search_trgm",
                    "document_title_trgm",
                    "correspondent_name_trgm",
                    "event_title_trgm",
                }
            ),
        ),
        Question(
            "compose_check_recipient",
            "compose_check_recipient",
            [
                {"contact_id": pk, "template_id": TEMPLATE_ID}
                for pk in sample(contact_ids)
            ],
            naive_check_recipient,
            frozenset({"contacts_contact_pkey"}),
        ),
    ]
    # Drawn last, so that the other questions keep the inputs they had.
    last_names = Contact.objects.filter(
        household=household, kind="person", status=ContactStatus.ACTIVE
    ).exclude(last_name="")
    questions.insert(
        1,
        Question(
            "find_person by last name",
            "find_person",
            [
                {"query": name}
                for name in sample(last_names.values_list("last_name", flat=True))
            ],
            naive_find_person,
            frozenset({"contact_search_trgm"}),
        ),
    )
    return questions


def index_names() -> dict[str, Any]:
    """Return the names of the indexes the questions expect, read off the models."""
    from people_search.index.models import NameWord

    def named(model: Any, fields: list[str]) -> str:
        return next(i.name for i in model._meta.indexes if i.fields == fields)

    # B-tree and GIN (btree_gin) indexes alike read a household's contacts.
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'contacts_contact' "
            "AND indexdef ~ 'USING (btree|gin) \\(household_id'"
        )
        household_indexes = frozenset(row[0] for row in cursor.fetchall())
    return {
        "channel_lookup": named(ContactChannel, ["household", "kind", "value"]),
        "word_household": next(
            c.name for c in NameWord._meta.constraints if c.name == "name_word_unique"
        ),
        "contact_household_indexes": household_indexes,
    }


# Running one question every way.


BENCH_CARD = uuid.UUID(int=0)


class Skills:
    """Call skills as the household's admin: through DRF in-process, or directly."""

    def __init__(self, household: Household) -> None:
        self.household = household
        self.membership = Membership.objects.select_related("household", "profile").get(
            household=household, profile__username=f"{household.slug}-admin"
        )
        revoke_tokens(profile=self.membership.profile)
        _, self.token = issue_token(profile=self.membership.profile, name="bench")
        self.client = Client()

    def api(self, skill: str, inputs: Inputs) -> bytes:
        response = self.client.post(
            f"/api/skills/{skill}/call/",
            inputs,
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {self.token}",
        )
        assert response.status_code == 200, response.content[:500]
        return response.content

    def mcp(self, skill: str, inputs: Inputs) -> bytes:
        body, headers = mcp_call(skill, inputs)
        response = self.client.post(
            "/mcp/",
            body,
            content_type="application/json",
            headers={**headers, "Authorization": f"Bearer {self.token}"},
        )
        assert response.status_code == 200, response.content[:500]
        assert response.json()["result"]["isError"] is False, response.content[:500]
        return response.content

    def direct(self, skill: str, inputs: Inputs) -> bytes:
        found = get_skill(skill)
        answer = found.run(
            MemberCaller(membership=self.membership),
            **validated_inputs(found.input_serializer, inputs),
        )
        # Written by its output serializer, as the API writes it; the card is
        # stored by the API layer, so here it is only referenced.
        data = dict(answer.data)
        if answer.card is not None:
            data["card"] = {"id": BENCH_CARD, "kind": answer.card.kind, "url": "/"}
        return to_json(output_writer(found.output_serializer)(data))


class BareSql:
    """Replay the reads of captured SQL through a psycopg connection of its own.

    Reads and SETs are replayed; writes (a cache refresh) are not the query.
    """

    def __init__(self) -> None:
        database = settings.DATABASES["default"]
        if "DATA_DIR" in database:
            socket_dir = ensure_server(Path(database["DATA_DIR"]))
            self.connection = psycopg.connect(
                host=str(socket_dir), dbname=database["NAME"], user="postgres"
            )
        else:
            self.connection = psycopg.connect(
                host=database["HOST"],
                port=database["PORT"] or 5432,
                dbname=database["NAME"],
                user=database["USER"],
                password=database["PASSWORD"],
            )

    def run(self, statements: Sequence[str]) -> int:
        rows = 0
        with self.connection.transaction(), self.connection.cursor() as cursor:
            for sql in replayable(statements):
                cursor.execute(sql.encode())
                if cursor.description is not None:
                    rows += len(cursor.fetchall())
        return rows

    def rows(self, statements: Sequence[str]) -> list[tuple]:
        """Return the rows of the last statement that returns any."""
        rows: list[tuple] = []
        with self.connection.transaction(), self.connection.cursor() as cursor:
            for sql in replayable(statements):
                cursor.execute(sql.encode())
                if cursor.description is not None:
                    rows = cursor.fetchall()
        return rows

    def explain(self, statements: Sequence[str]) -> list[dict[str, Any]]:
        """Return the EXPLAIN (ANALYZE, BUFFERS) plan of every SELECT, in order."""
        plans = []
        with self.connection.transaction(), self.connection.cursor() as cursor:
            for sql in replayable(statements):
                if not is_select(sql):
                    cursor.execute(sql.encode())
                    continue
                cursor.execute(
                    b"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + sql.encode()
                )
                plans.append(cursor.fetchone()[0][0])
        return plans


def plan_nodes(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield node
    for child in node.get("Plans", []):
        yield from plan_nodes(child)


TENANT_TABLES = {
    "contacts_contact",
    "contacts_contactchannel",
    "household_lead",
    "user_profiles",
    "household_membership",
    "people_search_nameword",
    "people_search_nameworduse",
    "addresses",
}


def read_plans(
    plans: list[dict[str, Any]], expected: frozenset[str], *, size: int
) -> dict:
    """Say which indexes the plans used, and warn about what they should not do.

    Below WARN_FROM_ROWS rows a household B-tree instead of the expected index
    is the planner's sound choice, and so is a sequential scan of a table the
    household fills mostly; otherwise a missing index earns a warning, as does
    a sequential scan that reads other households' rows too (more than three
    times the household's size, and SEQ_SCAN_ROWS at least), and JIT.
    """
    indexes: list[str] = []
    scans: list[str] = []
    own_scans: list[str] = []
    jit = False
    execution = 0.0
    for plan in plans:
        jit = jit or "JIT" in plan
        execution += plan["Execution Time"]
        for node in plan_nodes(plan["Plan"]):
            if "Index Name" in node and node["Index Name"] not in indexes:
                indexes.append(node["Index Name"])
            read = (
                node.get("Actual Rows", 0) + node.get("Rows Removed by Filter", 0)
            ) * node.get("Actual Loops", 1)
            if node["Node Type"] != "Seq Scan":
                continue
            if read >= max(SEQ_SCAN_ROWS, 3 * size):
                scans.append(f"{node['Relation Name']} ({read:,.0f} rows)")
            else:
                own_scans.append(node["Relation Name"])
    used = [name for name in indexes if name in expected]
    wanted = " or ".join(sorted(expected))
    if used:
        verdict = "index used: " + ", ".join(used)
    elif size < WARN_FROM_ROWS:
        verdict = f"{wanted} not needed at this size"
    elif own_scans:
        verdict = (
            f"{wanted} not used: the household is most of "
            f"{', '.join(dict.fromkeys(own_scans))}, read in one sequential scan"
        )
    else:
        verdict = f"WARNING: {wanted} not used"
    if scans:
        verdict += "; WARNING: sequential scan of " + ", ".join(scans)
    if jit:
        verdict += "; WARNING: JIT compiled"
    return {
        "indexes": indexes,
        "verdict": verdict,
        "execution_ms": round(execution, 2),
        "jit": jit,
    }


def run_question(
    question: Question,
    household: Household,
    skills: Skills,
    bare: BareSql,
    http: "HttpClient | None",
    reps: int,
    size: int,
) -> dict[str, Any]:
    """Answer the question every way; a skill call over SLOW_CALL_MS runs once."""
    inputs = question.inputs
    # The household's vocabulary size is cached for minutes; count it now so
    # the first call is not the one that pays for it.
    vocabulary_size(household.pk)
    started = time.perf_counter()
    skill_selects, first_statements = count_selects(
        lambda: skills.direct(question.skill, inputs[0])
    )
    first_call = (time.perf_counter() - started) * 1000
    slow = first_call > SLOW_CALL_MS
    if slow:
        # Repeating it, or sending it through the server as well, would tell
        # no more than this one call.
        inputs = inputs[:1]
        captured = [first_statements]
    else:
        captured = [
            count_selects(lambda one=one: skills.direct(question.skill, one))[1]
            for one in inputs
        ]
    by_input = {
        id(one): statements for one, statements in zip(inputs, captured, strict=True)
    }
    naive_selects, _ = count_selects(lambda: question.naive(household, inputs[0]))
    result: dict[str, Any] = {
        "question": question.key,
        "skill": question.skill,
        "inputs": len(inputs),
        "example": inputs[0],
        "slow": slow,
        "selects": {"skill": skill_selects, "naive": naive_selects},
        "naive": measure(
            lambda one: to_json(question.naive(household, one)), inputs, reps
        ),
        "sql": measure(lambda one: bare.run(by_input[id(one)]), inputs, reps),
        "explain": read_plans(bare.explain(captured[0]), question.expected, size=size),
    }
    if slow:
        result["ours"] = Timing([first_call])
        result["bytes"] = len(skills.direct(question.skill, inputs[0]))
        return result
    bodies = [skills.api(question.skill, one) for one in inputs]
    result["bytes"] = round(sum(len(body) for body in bodies) / len(bodies))
    result["selects"]["request"] = count_selects(
        lambda: skills.api(question.skill, inputs[0])
    )[0]
    result["api"] = measure(lambda one: skills.api(question.skill, one), inputs, reps)
    result["ours"] = measure(
        lambda one: skills.direct(question.skill, one), inputs, reps
    )
    if http is not None:
        result["http"] = measure(
            lambda one: http.call(question.skill, one, skills.token), inputs, reps
        )
    return result


# MCP beside REST: the same question through both doors.

MCP_QUESTION = "find_person by name"
# A difference of a millisecond or two needs many pairs: about this many
# seconds of them per comparison.
DOORS_SECONDS = 20.0
MCP_VERSION = "2026-07-28"


def mcp_call(skill: str, inputs: Inputs) -> tuple[dict[str, Any], dict[str, str]]:
    """Return a tools/call message and its headers, as an MCP client sends them."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": skill,
            "arguments": inputs,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MCP_VERSION,
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MCP_VERSION,
        "Mcp-Method": "tools/call",
        "Mcp-Name": skill,
    }
    return body, headers


def measure_doors(
    rest: Callable[[Inputs], Any],
    mcp: Callable[[Inputs], Any],
    inputs: list[Inputs],
    reps: int,
) -> dict[str, Timing]:
    """Time the same calls through both doors in turn, each input REST then MCP.

    Taken in pairs, a change of load on the machine hits both doors alike;
    `added` holds each pair's difference, MCP minus REST. Pairs are taken for
    DOORS_SECONDS, at least `reps` of them.
    """
    for index in range(WARMUP):
        rest(inputs[index % len(inputs)])
        mcp(inputs[index % len(inputs)])
    timings = {"rest": Timing(), "mcp": Timing(), "added": Timing()}
    deadline = time.perf_counter() + DOORS_SECONDS
    index = 0
    while index < max(reps, MIN_REPS) or time.perf_counter() < deadline:
        one = inputs[index % len(inputs)]
        index += 1
        pair = []
        for call in (rest, mcp):
            started = time.perf_counter()
            call(one)
            pair.append((time.perf_counter() - started) * 1000)
        timings["rest"].samples.append(pair[0])
        timings["mcp"].samples.append(pair[1])
        timings["added"].samples.append(pair[1] - pair[0])
    return timings


def mcp_beside_rest(
    question: Question, skills: Skills, http: "HttpClient | None", reps: int
) -> dict[str, Any]:
    """Time the question's calls over MCP and over REST, in process and over HTTP."""
    skill, inputs = question.skill, question.inputs
    timings = measure_doors(
        lambda one: skills.api(skill, one),
        lambda one: skills.mcp(skill, one),
        inputs,
        reps,
    )
    if http is not None:
        over_http = measure_doors(
            lambda one: http.call(skill, one, skills.token),
            lambda one: http.mcp(skill, one, skills.token),
            inputs,
            reps,
        )
        timings |= {f"{door}_http": timing for door, timing in over_http.items()}
    return {
        "question": question.key,
        "calls": len(timings["rest"].samples),
        "bytes": {
            "rest": round(mean(len(skills.api(skill, one)) for one in inputs)),
            "mcp": round(mean(len(skills.mcp(skill, one)) for one in inputs)),
        },
        **{key: timing.as_dict() for key, timing in timings.items()},
    }


# HTTP through the production server.


class HttpClient:
    def __init__(self, port: int) -> None:
        self.base = f"http://127.0.0.1:{port}"
        self.session = requests.Session()

    def call(self, skill: str, inputs: Inputs, token: str) -> bytes:
        response = self.session.post(
            f"{self.base}/api/skills/{skill}/call/",
            json=inputs,
            headers={"Authorization": f"Bearer {token}"},
            timeout=120,
        )
        assert response.status_code == 200, response.text[:500]
        return response.content

    def mcp(self, skill: str, inputs: Inputs, token: str) -> bytes:
        body, headers = mcp_call(skill, inputs)
        response = self.session.post(
            f"{self.base}/mcp/",
            json=body,
            headers={**headers, "Authorization": f"Bearer {token}"},
            timeout=120,
        )
        assert response.status_code == 200, response.text[:500]
        assert response.json()["result"]["isError"] is False, response.text[:500]
        return response.content


@contextmanager
def app_server(workers: int = 2) -> Iterator[HttpClient]:
    """Serve the app as production does (granian) on a free port of
    127.0.0.1, production settings; its log goes to bench/results/."""
    port = free_port()
    environment = {
        **os.environ,
        **LOOPBACK_PRODUCTION,
        "DJANGO_SECRET_KEY": os.environ["DJANGO_SECRET_KEY"],
        "YORIK_DATA_DIR": str(settings.YORIK_DATA_DIR),
        "YORIK_API_RATE": os.environ["YORIK_API_RATE"],
        "YORIK_LOG_LEVEL": "WARNING",
    }
    log = RESULTS / "run-server.log"
    RESULTS.mkdir(parents=True, exist_ok=True)
    log.write_text("")
    process = start_server(port=port, workers=workers, log=log, environment=environment)
    client = HttpClient(port)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                client.session.get(f"{client.base}/api/schema/", timeout=30)
                break
            except requests.ConnectionError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError(
                        f"the server did not start:\n{log.read_text()}"
                    ) from None
                time.sleep(0.3)
        yield client
    finally:
        process.terminate()
        process.wait(timeout=30)


# Reports.


def machine() -> dict[str, Any]:
    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        server = cursor.fetchone()[0]
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        pgvector = cursor.fetchone()[0]
        cursor.execute("SHOW shared_buffers")
        shared_buffers = cursor.fetchone()[0]
        cursor.execute("SHOW jit")
        jit = cursor.fetchone()[0]
    return {
        "cpu_count": os.cpu_count(),
        "postgresql": server,
        "pgvector": pgvector,
        "shared_buffers": shared_buffers,
        "jit": jit,
        "python": platform.python_version(),
        "django": django.get_version(),
        "load_average": [round(load, 2) for load in os.getloadavg()],
    }


def table_rows() -> dict[str, int]:
    """Return the rows of the tenant tables: every household, not only one."""
    with connection.cursor() as cursor:
        counts = {}
        for table in sorted(TENANT_TABLES):
            cursor.execute(f"SELECT count(*) FROM {table}")  # noqa: S608
            counts[table] = cursor.fetchone()[0]
    return counts


def fmt(value: float) -> str:
    return f"{value:.1f}" if value < 100 else f"{value:.0f}"


def cells(timing: dict[str, float] | None) -> str:
    """Return the p50 and p95 cells of a timing, or dashes for one not taken."""
    if timing is None:
        return "- | -"
    return f"{fmt(timing['p50_ms'])} | {fmt(timing['p95_ms'])}"


def ratio(ours: float, other: float) -> str:
    return f"{ours / other:.2f}" if other else "-"


def markdown(report: dict[str, Any]) -> str:
    info = report["machine"]
    lines = [
        "# Speed benchmark",
        "",
        f"{info['cpu_count']} cores, PostgreSQL {info['postgresql']} "
        f"(pgvector {info['pgvector']}, shared_buffers {info['shared_buffers']}, "
        f"jit {info['jit']}), Python {info['python']}, Django {info['django']}; "
        f"load average at start {info['load_average']}.",
        "",
        "Data sizes (one household each, all in the same tables): "
        + ", ".join(
            f"{label}: {size['contacts']:,} contacts and {size['people']:,} "
            "members + leads"
            for label, size in report["sizes"].items()
        )
        + ". Rows in the tables: "
        + ", ".join(f"{table} {n:,}" for table, n in report["table_rows"].items())
        + ".",
        "",
        "## Latency through the stack",
        "",
        "Milliseconds. HTTP: granian (2 workers x 2 threads) on 127.0.0.1 with a "
        "keep-alive client; in-process: Django's test client through middleware, "
        "token check, throttle, skill, card and JSON. SELECTs per call: the whole "
        "request / the skill alone. A dash: the skill took over "
        f"{SLOW_CALL_MS / 1000:.0f} s in one call and was timed only once (next "
        "table).",
        "",
        "| size | question | HTTP p50 | HTTP p95 | in-process p50 | in-process p95 "
        "| SELECTs | bytes |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for row in report["results"]:
        lines.append(
            f"| {row['size']} | {row['question']} "
            f"| {cells(row.get('http'))} | {cells(row.get('api'))} "
            f"| {row['selects'].get('request', '-')} / {row['selects']['skill']} "
            f"| {row['bytes']:,} |"
        )
    lines += [
        "",
        "## Ours, naive ORM and bare SQL",
        "",
        "Milliseconds, in-process. Ours: the skill function (input validation, "
        "its queries, output serializer, JSON). Naive: `icontains` over the "
        "name fields with `Q` and `prefetch_related`, DRF model serializers "
        "(similar names: pg_trgm `similarity()` on every row). Bare SQL: our "
        "queries' SQL through psycopg, rows fetched. Ratios of p95.",
        "",
        "| size | question | ours p50 | ours p95 | naive p50 | naive p95 "
        "| SQL p50 | SQL p95 | ours / naive | ours / SQL | naive SELECTs |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in report["results"]:
        ours, naive, sql = row["ours"], row["naive"], row["sql"]
        lines.append(
            f"| {row['size']} | {row['question']} "
            f"| {cells(ours)}{' (one call)' if row['slow'] else ''} "
            f"| {cells(naive)} | {cells(sql)} "
            f"| {ratio(ours['p95_ms'], naive['p95_ms'])} "
            f"| {ratio(ours['p95_ms'], sql['p95_ms'])} "
            f"| {row['selects']['naive']} |"
        )
    lines += [
        "",
        "## Indexes (EXPLAIN ANALYZE of each question's queries)",
        "",
        "| size | question | indexes in the plans | verdict | execution ms |",
        "|---|---|---|---|---:|",
    ]
    for row in report["results"]:
        explain = row["explain"]
        lines.append(
            f"| {row['size']} | {row['question']} "
            f"| {', '.join(explain['indexes']) or '-'} | {explain['verdict']} "
            f"| {explain['execution_ms']} |"
        )
    if report.get("mcp"):
        lines += mcp_markdown(report["mcp"])
    lines.append("")
    lines.append(
        "A 2-letter term has no trigram, so no trigram index can serve it: the "
        "planner reads the household's rows through a B-tree on `household_id` "
        "(or in one sequential scan where the household is most of the table) "
        "and filters them, which stays cheap at household scale."
    )
    if "people_search_at_scale" in report:
        from bench import people

        lines += ["", *people.markdown(report["people_search_at_scale"])]
    return "\n".join(lines) + "\n"


def mcp_markdown(rows: list[dict[str, Any]]) -> list[str]:
    """Return the MCP-beside-REST table: the same calls through both doors."""
    lines = [
        "",
        "## MCP beside REST",
        "",
        "Milliseconds, p50 / p95. The same `find_person` calls as `POST /mcp/` "
        "(a 2026-07-28 `tools/call`) and as `POST /api/skills/find_person/call/`, "
        "taken in pairs (each input through REST, then MCP) so that changes of "
        "load hit both; added: the p50 / p95 of each pair's difference, MCP "
        "minus REST. An MCP answer holds the answer twice (text and "
        "structuredContent), and the card's link once more.",
        "",
        "| size | calls | REST HTTP | MCP HTTP | added | REST in-process "
        "| MCP in-process | added | mean bytes REST / MCP |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]

    def pair(timing: dict[str, float]) -> str:
        return f"{fmt(timing['p50_ms'])} / {fmt(timing['p95_ms'])}"

    def added(timing: dict[str, float]) -> str:
        return f"{timing['p50_ms']:+.1f} / {timing['p95_ms']:+.1f}"

    for row in rows:
        http = "- | - | -"
        if "mcp_http" in row:
            http = (
                f"{pair(row['rest_http'])} | {pair(row['mcp_http'])} "
                f"| {added(row['added_http'])}"
            )
        lines.append(
            f"| {row['size']} | {row['calls']} | {http} | {pair(row['rest'])} "
            f"| {pair(row['mcp'])} | {added(row['added'])} "
            f"| {row['bytes']['rest']:,} / {row['bytes']['mcp']:,} |"
        )
    return lines


def chart(report: dict[str, Any], path: Path) -> None:
    """Plot p95 latency against data size, one panel per question."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    questions = list(dict.fromkeys(row["question"] for row in report["results"]))
    columns = 3
    figure, axes = plt.subplots(
        math.ceil(len(questions) / columns),
        columns,
        figsize=(15, 4 * math.ceil(len(questions) / columns)),
        squeeze=False,
    )
    lines = [
        ("http", "ours, HTTP", "-"),
        ("ours", "ours, skill function", "-"),
        ("naive", "naive ORM", "--"),
        ("sql", "bare SQL", ":"),
    ]
    for axis, question in zip(axes.flat, questions, strict=False):
        rows = [row for row in report["results"] if row["question"] == question]
        sizes = [report["sizes"][row["size"]]["contacts"] for row in rows]
        for key, label, style in lines:
            points = [
                (size, row[key]["p95_ms"])
                for size, row in zip(sizes, rows, strict=True)
                if key in row
            ]
            if points:
                axis.plot(*zip(*points, strict=True), style, marker="o", label=label)
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_title(question)
        axis.set_xlabel("rows per household")
        axis.set_ylabel("p95 ms")
        axis.grid(True, which="both", alpha=0.3)
    for axis in list(axes.flat)[len(questions) :]:
        axis.set_visible(False)
    axes.flat[0].legend()
    figure.suptitle(
        f"p95 latency against data size ({report['machine']['cpu_count']} cores)"
    )
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes",
        default="1k,10k,50k,100k",
        help="Comma-separated: 1k, 10k, 50k, 100k.",
    )
    parser.add_argument(
        "--quick", action="store_true", help="1k only, few repetitions."
    )
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--no-http", action="store_true", help="Skip the calls through the server."
    )
    parser.add_argument(
        "--no-people", action="store_true", help="Skip people search at scale."
    )
    parser.add_argument(
        "--only", default="", help="Only the questions whose name contains this."
    )
    args = parser.parse_args()
    labels = ["1k"] if args.quick else args.sizes.split(",")
    reps = 10 if args.quick else args.reps
    report: dict[str, Any] = {
        "machine": machine(),
        "sizes": {},
        "results": [],
        "mcp": [],
    }
    households = {}
    for label in labels:
        print(f"data {label} …", flush=True)
        households[label] = ensure_household(
            f"bench-{label}", contacts=SIZES[label], people=SIZES[label], seed=args.seed
        )
        report["sizes"][label] = {"contacts": SIZES[label], "people": SIZES[label]}
    report["table_rows"] = table_rows()
    bare = BareSql()
    with nullcontext() if args.no_http else app_server() as http:
        for label, household in households.items():
            skills = Skills(household)
            rng = random.Random(args.seed)
            for question in build_questions(household, rng):
                if args.only not in question.key:
                    continue
                started = time.perf_counter()
                result = run_question(
                    question, household, skills, bare, http, reps, SIZES[label]
                )
                result["size"] = label
                for key in ("api", "ours", "naive", "sql", "http"):
                    if key in result:
                        result[key] = result[key].as_dict()
                report["results"].append(result)
                if question.key == MCP_QUESTION and not result["slow"]:
                    beside = mcp_beside_rest(question, skills, http, reps)
                    report["mcp"].append({"size": label, **beside})
                print(
                    f"{label} {question.key}: ours p95 {result['ours']['p95_ms']} ms, "
                    f"{result['explain']['verdict']} "
                    f"({time.perf_counter() - started:.0f} s)",
                    flush=True,
                )
    if "100k" in households and not args.no_people:
        # bench/people.py builds on this module; let it find this very copy.
        sys.modules.setdefault("bench.run", sys.modules[__name__])
        from bench import people

        report["people_search_at_scale"] = people.measure_at_scale(
            seed=args.seed, reps=reps, bare=bare
        )
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "bench.json").write_text(
        json.dumps(report, indent=2, cls=DjangoJSONEncoder) + "\n"
    )
    output = markdown(report)
    (RESULTS / "bench.md").write_text(output)
    chart(report, RESULTS / "p95.png")
    print(output)


if __name__ == "__main__":
    main()
