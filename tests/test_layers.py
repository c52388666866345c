"""The layering of DESIGN.md §1, as import-linter checks it."""

import pkgutil
import subprocess
import sys
import tomllib
from importlib import import_module
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _layer_modules() -> set[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]
    layers = config["importlinter"]["contracts"][0]["layers"]
    return {
        name.strip().strip("()")
        for layer in layers
        for name in layer.replace("|", ":").split(":")
    }


def _in_a_layer(module: str, named: set[str]) -> bool:
    """Return whether a layer names the module or a package holding it."""
    parts = module.split(".")
    return any(".".join(parts[:end]) in named for end in range(1, len(parts) + 1))


@pytest.mark.parametrize("package", ["yorik", "people_search"])
def test_every_module_of_a_split_package_is_in_a_layer(package):
    """yorik holds two layers that name its modules: a new module must pick
    one. people_search is one layer, its lower subpackages included."""
    named = _layer_modules()
    path = import_module(package).__path__
    children = {f"{package}.{info.name}" for info in pkgutil.iter_modules(path)}

    assert {child for child in children if not _in_a_layer(child, named)} == set()


def test_imports_point_down_the_layers():
    lint_imports = Path(sys.executable).parent / "lint-imports"
    result = subprocess.run(
        [str(lint_imports), "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )

    assert result.returncode == 0, result.stdout
