"""Run the app's tests against a Citus cluster.

`python -m tests.citus.suite [pytest arguments]` builds Citus when needed
(tests.citus.build), starts a coordinator and two workers on loopback,
points Django at the coordinator with the settings Citus needs, and runs
the test suite there, but for the browser tests and the few below that
test one PostgreSQL: pytest-django migrates the test database and
tests/conftest.py distributes its tables by household before the first
test. Without the Citus source or its build tools it says so and passes,
unless YORIK_REQUIRE_CITUS=1.
"""

import os
import subprocess
import sys

from tests.citus.build import CitusUnavailable, ensure_citus
from tests.citus.cluster import temporary_cluster

# Plans read with EXPLAIN on one server, and the generic plans of plain
# PostgreSQL: on Citus a statement is planned with its household's value,
# by which Citus routes it.
IGNORED = ["tests/people_search/test_statements.py", "tests/yorik/test_indexes.py"]
DESELECTED = [
    "tests/people_search/test_people_search.py::"
    "test_connections_come_with_the_lanes_settings_and_generic_plans",
    "tests/people_search/test_typo_lane.py::"
    "test_the_lane_is_planned_once_and_still_finds_each_households_own",
    # Refused on a database without Citus.
    "tests/yorik/test_tenancy.py::test_distributing_needs_a_citus_coordinator",
    # The bundled server, which the cluster replaces.
    "tests/yorik/test_database_outages.py::"
    "test_a_bundled_server_that_cannot_start_yet_gets_503",
    # One server's statistics; tests/citus/test_distribution.py reads those
    # of a household's shards.
    "tests/yorik/test_statistics.py::"
    "test_a_bundle_import_analyses_the_tables_it_filled",
    "tests/yorik/test_statistics.py::"
    "test_a_small_import_into_a_large_calendar_analyses_nothing",
    # Citus reports an error of COPY on a worker without its SQLSTATE, so a
    # unique violation is no IntegrityError there.
    "tests/contacts/test_services.py::"
    "test_the_database_still_refuses_a_ref_the_household_has",
]
# pytest-xdist's workers, each with its own test database on the cluster.
WORKERS = 2
TEST_DATABASES = [f"test_yorik_gw{worker}" for worker in range(WORKERS)]


def main() -> int:
    try:
        ensure_citus(say=lambda message: print(message, file=sys.stderr))
    except CitusUnavailable as reason:
        if os.environ.get("YORIK_REQUIRE_CITUS") == "1":
            print(f"{reason}, but YORIK_REQUIRE_CITUS=1 requires Citus")
            return 1
        print(f"{reason}: the app's tests on a Citus cluster are skipped.")
        return 0
    with temporary_cluster() as cluster:
        for database in ("yorik", *TEST_DATABASES):
            cluster.create_database(database)
        environment = {
            **os.environ,
            "DATABASE_URL": cluster.url("yorik"),
            "YORIK_CITUS": "1",
            "YORIK_CITUS_SUITE": "1",
        }
        arguments = sys.argv[1:]
        if all(argument.startswith("-") for argument in arguments):
            arguments.append("tests")
        command = [
            sys.executable,
            "-m",
            "pytest",
            "-n",
            str(WORKERS),
            "-m",
            "not browser and not citus",
            *(f"--ignore={path}" for path in IGNORED),
            *(f"--deselect={test}" for test in DESELECTED),
            *arguments,
        ]
        print("On a Citus cluster:", " ".join(command[3:]), flush=True)
        return subprocess.run(command, env=environment, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
