"""Another revision of the repository, checked out beside this one for a comparison."""

import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@contextmanager
def checkout_of(revision: str) -> Iterator[Path]:
    """Check the revision out into a temporary worktree, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="yorik-compare-") as parent:
        path = Path(parent) / "checkout"
        subprocess.run(
            ["git", "worktree", "add", "--detach", "--quiet", str(path), revision],
            cwd=ROOT,
            check=True,
        )
        try:
            yield path
        finally:
            subprocess.run(
                ["git", "worktree", "remove", "--force", str(path)],
                cwd=ROOT,
                check=True,
            )
