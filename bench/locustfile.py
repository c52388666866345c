"""Locust users for bench/load.py: the assistant backend calling skills.

Each simulated user takes the next household token of the plan that load.py
writes (YORIK_LOAD_PLAN) and calls that household's skills with its own
names, phones, contact ids and templates. A request counts as failed unless it
answers 200 with the JSON keys the skill promises. When the run stops, locust's
final numbers go to YORIK_LOAD_STATS as JSON.
"""

import itertools
import json
import os
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from locust import FastHttpUser, constant, events, task
from locust.env import Environment
from locust.stats import StatsEntry, StatsError

PLAN = json.loads(Path(os.environ["YORIK_LOAD_PLAN"]).read_text())

# Round-robin over households first, so every household gets callers early on.
SEATS = itertools.cycle(
    [
        (household, token)
        for position in range(max(len(h["tokens"]) for h in PLAN))
        for household in PLAN
        for token in household["tokens"][position : position + 1]
    ]
)

Check = Callable[[dict[str, Any]], str | None]


def at_least_one(data: dict[str, Any]) -> str | None:
    return (
        None
        if data["count"] >= 1
        else "no row for an input taken from the household's own data"
    )


class AssistantBackend(FastHttpUser):
    """Calls skills back to back, as a busy assistant backend would."""

    wait_time = constant(0)

    def on_start(self) -> None:
        household, token = next(SEATS)
        self.inputs = household["inputs"]
        self.headers = {"Authorization": f"Bearer {token}"}
        self.skills_listed = household["skills_listed"][token]
        self.rng = random.Random()

    def pick(self, key: str) -> Any:
        return self.rng.choice(self.inputs[key])

    def call(
        self,
        skill: str,
        inputs: dict[str, Any],
        *,
        label: str,
        keys: set[str],
        check: Check | None = None,
    ) -> None:
        """POST one skill call; fail it unless it is a 200 with the expected keys."""
        with self.client.post(
            f"/api/skills/{skill}/call/",
            json=inputs,
            headers=self.headers,
            name=f"{skill} ({label})",
            catch_response=True,
        ) as response:
            verify(response, keys, check)

    @task(12)
    def find_person_by_name(self) -> None:
        name = self.pick(self.rng.choice(["contact_names", "first_names"]))
        self.call(
            "find_person",
            {"query": name},
            label="name",
            keys={"results", "count", "ambiguous"},
            check=at_least_one,
        )

    @task(6)
    def find_person_by_descriptor(self) -> None:
        self.call(
            "find_person",
            {"query": self.pick("descriptors"), "source": "contacts"},
            label="relation or alias",
            keys={"results", "count", "ambiguous"},
        )

    @task(5)
    def find_person_by_channel(self) -> None:
        channel = self.pick("channels")
        self.call(
            "find_person",
            {"channel_kind": channel["kind"], "channel_value": channel["value"]},
            label="channel",
            keys={"results", "count", "ambiguous"},
            check=at_least_one,
        )

    @task(3)
    def find_person_everyone(self) -> None:
        self.call(
            "find_person",
            {"source": "household"},
            label="no query",
            keys={"results", "count", "ambiguous"},
            check=at_least_one,
        )

    @task(5)
    def browse_contacts(self) -> None:
        inputs = self.rng.choice(
            [{"defer_card": True}, {"pick_to_chat": False}, {"kind": "business"}]
        )
        self.call(
            "list_contacts_for_picking",
            inputs,
            label="browse",
            keys={"count", "contacts"},
        )

    @task(5)
    def rank_picks(self) -> None:
        ids = self.rng.sample(self.inputs["contact_ids"], self.rng.randint(3, 10))
        picks = [
            {"id": contact_id, "confidence": round(1 - rank * 0.08, 2), "reason": ""}
            for rank, contact_id in enumerate(ids)
        ]

        def none_dropped(data: dict[str, Any]) -> str | None:
            return f"dropped own ids {data['dropped']}" if data["dropped"] else None

        self.call(
            "list_contacts_for_picking",
            {"query": self.pick("descriptors"), "ranked_picks": picks},
            label="ranked picks",
            keys={"rendered", "dropped", "padded", "card"},
            check=none_dropped,
        )

    @task(8)
    def people_search_text(self) -> None:
        query = self.pick(self.rng.choice(["people_names", "people_emails"]))
        self.call(
            "people_search",
            {"query": query},
            label="text",
            keys={"items", "totalCount", "card"},
        )

    @task(5)
    def people_search_phone(self) -> None:
        self.call(
            "people_search",
            {"query": self.pick("people_phones")},
            label="phone",
            keys={"items", "totalCount", "card"},
        )

    @task(5)
    def people_search_similar(self) -> None:
        self.call(
            "people_search",
            {"query": self.pick("similar_names")},
            label="similar name",
            keys={"items", "totalCount", "card"},
        )

    @task(6)
    def search_anything(self) -> None:
        query = self.pick(self.rng.choice(["people_names", "contact_names"]))
        self.call(
            "search_anything",
            {"query": query},
            label="name",
            keys={"items", "totalCount"},
        )

    @task(6)
    def find_known_provider(self) -> None:
        self.call(
            "find_known_provider",
            {"category": self.pick("categories")},
            label="category",
            keys={"candidates", "source_counts"},
        )

    @task(6)
    def compose_check_recipient(self) -> None:
        recipient = self.pick("recipients")

        def same_contact(data: dict[str, Any]) -> str | None:
            wanted = recipient["contact_name"]
            name = data["contact_name"]
            return None if name == wanted else f"{name!r} instead of {wanted!r}"

        self.call(
            "compose_check_recipient",
            {
                "contact_id": recipient["contact_id"],
                "template_id": recipient["template_id"],
            },
            label="contact and template",
            keys={"complete", "address", "missing", "contact_name"},
            check=same_contact,
        )

    @task(3)
    def list_skills(self) -> None:
        with self.client.get(
            "/api/skills/",
            headers=self.headers,
            name="GET /api/skills/",
            catch_response=True,
        ) as response:

            def every_skill(data: dict[str, Any]) -> str | None:
                found = len(data["skills"])
                if found == self.skills_listed:
                    return None
                return f"{found} skills listed"

            verify(response, {"skills"}, every_skill)


# bench/load.py --only: the tasks whose name contains this, at their weights.
if ONLY := os.environ.get("YORIK_LOAD_ONLY"):
    AssistantBackend.tasks = [
        task for task in AssistantBackend.tasks if ONLY in task.__name__
    ]
    if not AssistantBackend.tasks:
        raise SystemExit(f"No task of bench/locustfile.py is named like {ONLY!r}.")


def verify(response: Any, keys: set[str], check: Check | None) -> None:
    """Mark the response failed unless it is a 200 JSON object as expected."""
    if response.status_code != 200:
        response.failure(f"HTTP {response.status_code}: {(response.text or '')[:200]}")
        return
    try:
        data = response.json()
    except ValueError:
        response.failure(f"not JSON: {(response.text or '')[:200]}")
        return
    if not isinstance(data, dict):
        response.failure(f"not a JSON object: {(response.text or '')[:200]}")
        return
    if not keys <= data.keys():
        response.failure(f"keys missing: {sorted(keys - data.keys())}")
        return
    problem = check(data) if check else None
    if problem:
        response.failure(problem)


def summarize(entry: StatsEntry) -> dict[str, Any]:
    return {
        "name": entry.name,
        "requests": entry.num_requests,
        "failures": entry.num_failures,
        "requests_per_s": entry.total_rps,
        "mean_ms": entry.avg_response_time,
        "p50_ms": entry.get_response_time_percentile(0.50),
        "p95_ms": entry.get_response_time_percentile(0.95),
        "p99_ms": entry.get_response_time_percentile(0.99),
        "max_ms": entry.max_response_time,
    }


@events.test_stop.add_listener
def save_stats(environment: Environment, **kwargs: Any) -> None:
    """Write the final numbers; locust's CSV files lag a few seconds behind."""
    stats = environment.stats
    rows = [summarize(entry) for _, entry in sorted(stats.entries.items())]
    failures = [
        {
            "name": error.name,
            "error": StatsError.parse_error(error.error),
            "occurrences": error.occurrences,
        }
        for error in stats.errors.values()
    ]
    Path(os.environ["YORIK_LOAD_STATS"]).write_text(
        json.dumps({"rows": [*rows, summarize(stats.total)], "failures": failures})
    )
