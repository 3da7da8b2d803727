"""Packaging: the backends install as ``mipdp.solvers``, and the error layer has no cycle."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _pyproject() -> dict:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11
        import tomli as tomllib
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_backends_installed_as_mipdp_solvers_not_top_level():
    st = _pyproject()["tool"]["setuptools"]
    assert st["package-dir"] == {"mipdp.solvers": "solvers"}
    assert "solvers" not in st["packages"]
    assert all(name == "mipdp" or name.startswith("mipdp.") for name in st["packages"])


def test_explicit_package_list_matches_the_folders():
    st = _pyproject()["tool"]["setuptools"]
    on_disk = {".".join(p.parent.relative_to(ROOT).parts)
               for p in (ROOT / "mipdp").rglob("__init__.py")}
    on_disk.add("mipdp.solvers")
    assert set(st["packages"]) == on_disk


def _module_level_imports(path: Path) -> list[str]:
    names = []
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.ImportFrom):
            names.append("." * node.level + (node.module or ""))
        elif isinstance(node, ast.Import):
            names.extend(a.name for a in node.names)
    return names


def test_error_layer_imports_neither_package_nor_backends():
    assert not [m for m in _module_level_imports(ROOT / "mipdp" / "exceptions.py")
                if m.startswith((".", "mipdp", "solvers"))]
    assert [m for m in _module_level_imports(ROOT / "mipdp" / "_param_validation.py")
            if m.startswith((".", "mipdp", "solvers"))] == [".exceptions"]


@pytest.mark.parametrize("path", sorted((ROOT / "solvers").glob("*.py")), ids=lambda p: p.name)
def test_backends_import_only_the_bottom_layer_of_mipdp(path):
    allowed = {"mipdp.exceptions", "mipdp._param_validation"}
    for m in _module_level_imports(path):
        assert not m.startswith("solvers"), f"{path.name} imports the top-level name {m!r}"
        if m.startswith("mipdp"):
            assert m in allowed or m.startswith("mipdp.solvers"), f"{path.name} imports {m!r}"


def test_errors_are_one_class_each():
    import mipdp.exceptions as exc
    import mipdp.solvers as sv
    for name in ("SolverError", "BackendUnavailableError", "SizeLimitError",
                 "SolverTimeLimitError", "InvalidParameterError"):
        assert getattr(sv, name) is getattr(exc, name)


@pytest.mark.parametrize("first", ["mipdp.solvers.base", "mipdp.exceptions",
                                   "mipdp._param_validation", "mipdp.solvers"])
def test_any_module_imports_first_in_a_fresh_interpreter(first):
    code = f"import {first}, mipdp; print(mipdp.solvers.get_backend.__module__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "mipdp.solvers"


# ------------------------------------------------------------------ no research study installed
def _wheel_modules() -> list[tuple[str, str, str]]:
    """The wheel's modules, as setuptools' ``build_py`` lists them from pyproject's packages."""
    from setuptools.dist import Distribution
    st = _pyproject()["tool"]["setuptools"]
    dist = Distribution({"name": "mipdp", "packages": st["packages"],
                         "package_dir": st["package-dir"], "script_name": "setup.py"})
    cmd = dist.get_command_obj("build_py")
    cmd.ensure_finalized()
    return cmd.find_all_modules()


def test_the_wheel_holds_no_research_study():
    """Issue 38: the research studies live in the clone's experiments/studies/, not installed."""
    from mipdp.experiments.studies import STUDIES
    modules = _wheel_modules()
    files = {Path(f).as_posix() for _, _, f in modules}
    assert "mipdp/selection.py" in files and "solvers/base.py" in files
    research = {p.stem for p in (ROOT / "experiments" / "studies").glob("*.py")}
    installed = {m for _, m, _ in modules}
    assert not (research - {"__init__"}) & installed, research & installed
    studies = {m for pkg, m, _ in modules if pkg == "mipdp.experiments.studies"}
    assert studies == {"__init__"} | set(STUDIES)
    assert not any("experiments/studies/" in f and not f.startswith("mipdp/") for f in files)


@pytest.mark.slow
def test_the_built_wheel_holds_no_research_study(tmp_path):
    """``pip wheel . --no-deps``, then its file list (slow: builds in an isolated env)."""
    import zipfile
    out = subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q",
                          "-w", str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    (wheel,) = tmp_path.glob("mipdp-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "mipdp/selection.py" in names and "mipdp/solvers/base.py" in names
    assert not [n for n in names if n.startswith("experiments/")]
    studies = {Path(n).stem for n in names if n.startswith("mipdp/experiments/studies/")}
    from mipdp.experiments.studies import STUDIES
    assert studies == {"__init__"} | set(STUDIES)


def test_the_test_extra_is_light_and_dev_holds_it():
    """``pip install -e ".[test]"``: what the default run needs, no docs, benchmark or
    commercial solver; ``dev`` (installed by .ci/run) is a superset."""
    import re
    extras = _pyproject()["project"]["optional-dependencies"]

    def names(reqs):
        return {re.split(r"[<>=;\[ ]", r, maxsplit=1)[0].lower() for r in reqs}

    test, dev = names(extras["test"]), names(extras["dev"])
    assert {"pytest", "hypothesis", "pandas"} <= test
    assert not test & {"sphinx", "asv", "gurobipy", "pyomo", "numpydoc", "myst-parser"}
    assert test <= dev, test - dev
