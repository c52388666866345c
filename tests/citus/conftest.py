"""The Citus cluster that tests marked `citus` run against."""

import os
import sys
from collections.abc import Iterator

import pytest

from tests.citus.build import CitusUnavailable, ensure_citus
from tests.citus.cluster import CitusCluster, temporary_cluster


@pytest.fixture(scope="session")
def citus_cluster() -> Iterator[CitusCluster]:
    """Start a coordinator and two workers once, or skip (fail in CI) without Citus.

    Citus is built from the vendored source the first time (a minute or two),
    then taken from the cache.
    """
    try:
        ensure_citus(say=lambda message: print(message, file=sys.stderr))
    except CitusUnavailable as reason:
        if os.environ.get("YORIK_REQUIRE_CITUS") == "1":
            pytest.fail(f"{reason}, but YORIK_REQUIRE_CITUS=1 requires Citus")
        pytest.skip(f"{reason}; Citus tests skipped")
    with temporary_cluster() as cluster:
        yield cluster
