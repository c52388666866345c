"""Fuzz the agent API at length: schemathesis against the app server on the bench data.

    .venv/bin/python bench/fuzz.py [--max-examples 500] [--seconds 600] [--seed 1]
                                   [-- more `schemathesis run` options]

Runs with the production settings (DJANGO_DEBUG=0, rate limits in the database
cache) on the bench database (YORIK_DATA_DIR, default .yorik-bench): loads the
demo households, issues an API token for the Becker household's admin, starts
the production server (granian) on a free loopback port and runs `schemathesis
run` on /api/schema/ with every phase (examples, coverage, fuzzing, stateful)
and the checks of the CI test (tests/yorik/test_fuzz_api.py). Schemathesis
prints a summary with each failure and a curl command that replays it; the
server's tracebacks are in bench/results/fuzz-server.log, a JUnit report in
bench/results/fuzz-junit.xml.
The exit code is schemathesis': 0 when nothing failed.
"""

import argparse
import io
import os
import secrets
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.servers import BIN, LOOPBACK_PRODUCTION, free_port, start_server

# Production settings, for preparing the data here and for the server alike.
os.environ.update(
    {**LOOPBACK_PRODUCTION, "DJANGO_SECRET_KEY": secrets.token_urlsafe(50)}
)

from bench.django_setup import ROOT, setup

setup()

from django.core.management import call_command  # noqa: E402

from household.models import Membership  # noqa: E402
from yorik.tokens import issue_token, revoke_tokens  # noqa: E402

RESULTS = ROOT / "bench" / "results"
CHECKS = [
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_schema_conformance",
    "negative_data_rejection",
    "ignored_auth",
    # Only the coverage phase sends undeclared methods, so only this run checks them.
    "unsupported_method",
]


def issue_admin_token() -> str:
    """Load the demo households and return a fresh token for Becker's admin."""
    call_command("seed_demo", stdout=io.StringIO())
    anna = Membership.objects.select_related("profile").get(
        household__slug="becker", profile__username="anna"
    )
    revoke_tokens(profile=anna.profile)
    return issue_token(profile=anna.profile, name="fuzz")[1]


def wait_until_ready(*, server: subprocess.Popen, schema_url: str) -> None:
    """Return once the schema is served; raise if the server died or stayed silent."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError("the server exited; see bench/results/fuzz-server.log")
        try:
            with urllib.request.urlopen(schema_url, timeout=5):  # noqa: S310
                return
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.5)
    raise RuntimeError("the server did not answer within 60 s")


def run_schemathesis(*, schema_url: str, token: str, args: argparse.Namespace) -> int:
    command = [
        str(BIN / "schemathesis"),
        "run",
        schema_url,
        f"--header=Authorization: Bearer {token}",
        f"--checks={','.join(CHECKS)}",
        "--phases=examples,coverage,fuzzing,stateful",
        f"--max-examples={args.max_examples}",
        f"--seed={args.seed}",
        "--workers=1",
        "--generation-database=none",
        "--report=junit",
        f"--report-junit-path={RESULTS / 'fuzz-junit.xml'}",
        *([f"--max-time={args.seconds}"] if args.seconds else []),
        *args.schemathesis_args,
    ]
    # Schemathesis keeps a cache in its working directory: keep it with the results.
    return subprocess.run(command, cwd=RESULTS, check=False).returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--max-examples", type=int, default=500, help="examples per operation"
    )
    parser.add_argument(
        "--seconds",
        type=int,
        default=0,
        help="time budget: fuzzing repeats until it is spent (0: no budget)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "schemathesis_args",
        nargs="*",
        help="passed on to `schemathesis run` (after --)",
    )
    args = parser.parse_args()
    RESULTS.mkdir(parents=True, exist_ok=True)
    log = RESULTS / "fuzz-server.log"
    token = issue_admin_token()
    port = free_port()
    schema_url = f"http://127.0.0.1:{port}/api/schema/"
    # The production server, with its log and Django's (tracebacks included).
    log.write_text("")
    server = start_server(port=port, workers=2, log=log)
    try:
        wait_until_ready(server=server, schema_url=schema_url)
        status = run_schemathesis(schema_url=schema_url, token=token, args=args)
    finally:
        server.terminate()
        server.wait(timeout=30)
    errors = log.read_text().count("Internal Server Error")
    print(f"Server errors logged: {errors} (tracebacks in {log.relative_to(ROOT)})")
    return status


if __name__ == "__main__":
    sys.exit(main())
