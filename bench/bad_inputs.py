"""Time and size of the answers to hostile bodies, each in a fresh process.

    .venv/bin/python bench/bad_inputs.py [--only TEXT]

Each case is one request from a viewer (the lowest tier) of a household made
for the run and rolled back after it, sent in-process through Django's test
client (middleware, token check, throttle, parser, serializers, JSON) with
production settings. Printed per case: status, seconds, bytes of the answer
and how far the request raised the process's peak memory.
"""

import argparse
import json
import os
import resource
import secrets
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

MCP_VERSION = "2026-07-28"


def zeros(count: int) -> dict:
    return {"query": "Anna", "scopes": [0] * count}


def unknown_keys(count: int, **known: object) -> dict:
    return {**known, **{f"{index:x}": 0 for index in range(count)}}


def nested(levels: int) -> str:
    return '{"query": ' + "[" * levels + "]" * levels + "}"


CASES: dict[str, tuple[str, Callable[[], object]]] = {
    "rest scopes 1.2M": ("rest", lambda: zeros(1_200_000)),
    "rest scopes 400k": ("rest", lambda: zeros(400_000)),
    "mcp scopes 400k": ("mcp", lambda: zeros(400_000)),
    "rest 250k unknown keys": ("rest", lambda: unknown_keys(250_000, query="Anna")),
    "mcp 250k unknown keys": ("mcp", lambda: unknown_keys(250_000, query="Anna")),
    "turns 250k unknown keys": (
        "turns",
        lambda: unknown_keys(250_000, message="Anna"),
    ),
    "rest nested 938 levels": ("rest", lambda: nested(938)),
    "mcp nested 938 levels": ("mcp", lambda: nested(938)),
    "mcp body over 2.5 MB": ("mcp", lambda: {"query": "x" * 2_700_000}),
}


def compact(data: object) -> str:
    return json.dumps(data, separators=(",", ":"))


def mcp_body(arguments: object) -> str:
    arguments_text = arguments if isinstance(arguments, str) else compact(arguments)
    meta = {
        "io.modelcontextprotocol/protocolVersion": MCP_VERSION,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    return (
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": '
        f'{{"name": "search_anything", "_meta": {json.dumps(meta)}, '
        f'"arguments": {arguments_text}}}}}'
    )


def run_case(name: str) -> dict:
    """Send one case's request in this process and return what it measured."""
    os.environ.setdefault("DJANGO_DEBUG", "0")
    os.environ.setdefault("DJANGO_SECRET_KEY", secrets.token_urlsafe(40))
    os.environ.setdefault("DJANGO_ALLOWED_HOSTS", "testserver")
    os.environ.setdefault("DJANGO_SECURE_SSL_REDIRECT", "0")
    os.environ.setdefault("YORIK_API_RATE", "1000000/min")
    from bench.django_setup import setup

    setup()
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections, transaction
    from django.test import Client

    from household.models import Household
    from household.services import create_member
    from yorik.tokens import issue_token

    # The requests run inside the run's transaction, which is rolled back.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    route, build = CASES[name]
    data = build()
    body = data if isinstance(data, str) else compact(data)
    headers = {}
    path = "/api/skills/search_anything/call/"
    if route == "turns":
        path = "/api/agent/turns/"
    elif route == "mcp":
        path = "/mcp/"
        body = mcp_body(data)
        headers = {
            "HTTP_MCP_PROTOCOL_VERSION": MCP_VERSION,
            "HTTP_MCP_METHOD": "tools/call",
            "HTTP_MCP_NAME": "search_anything",
            "HTTP_ACCEPT": "application/json, text/event-stream",
        }
    with transaction.atomic():
        household = Household.objects.create(
            slug=f"bad-inputs-{secrets.token_hex(4)}", name="Bad inputs"
        )
        viewer = create_member(
            household=household,
            username="bad-inputs-viewer",
            role="viewer",
            status="active",
            lead_access=None,
            password=None,
            first_name="Vera",
        )
        _, token = issue_token(profile=viewer.profile)
        client = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
        peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        started = time.perf_counter()
        response = client.post(path, body, content_type="application/json", **headers)
        seconds = time.perf_counter() - started
        peak_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        transaction.set_rollback(True)
    return {
        "case": name,
        "request_bytes": len(body),
        "status": response.status_code,
        "content_type": response.get("Content-Type", ""),
        "seconds": round(seconds, 3),
        "answer_bytes": len(response.content),
        "peak_rise_mb": round((peak_after - peak_before) / 1024, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="run only cases containing TEXT")
    parser.add_argument("--case", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case:
        print(json.dumps(run_case(args.case)))
        return
    print(
        f"{'case':26} {'request':>10} {'status':>6} {'seconds':>8} "
        f"{'answer':>11} {'peak +MB':>9}  content type"
    )
    for name in CASES:
        if args.only not in name:
            continue
        done = subprocess.run(
            [sys.executable, __file__, "--case", name],
            check=True,
            capture_output=True,
            text=True,
        )
        row = json.loads(done.stdout.strip().splitlines()[-1])
        print(
            f"{name:26} {row['request_bytes']:>10,} {row['status']:>6} "
            f"{row['seconds']:>8.3f} {row['answer_bytes']:>11,} "
            f"{row['peak_rise_mb']:>9.1f}  {row['content_type']}"
        )


if __name__ == "__main__":
    main()
