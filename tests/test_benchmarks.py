"""The asv suites in benchmarks/ import, and every suite's setup and one benchmark run.

No asv run: each benchmark class is instantiated by hand at tiny sizes
(``MIPDP_BENCH_TINY=1`` shrinks every design to n <= 200, p <= 30) with a temporary data
cache, its ``setup`` called with the first parameter combination, then its benchmark
methods; the classes with a long timeout (a p = 10⁵ parameter, which may take another
path, e.g. a pre-screen) also run their last combination, and ``Comparators`` every
method.
"""

from __future__ import annotations

import importlib
import inspect
import itertools
import pkgutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "benchmarks"
PREFIXES = ("time_", "peakmem_", "track_", "mem_", "timeraw_")


@pytest.fixture
def suites(monkeypatch, tmp_path):
    monkeypatch.setenv("MIPDP_BENCH_TINY", "1")
    monkeypatch.setenv("MIPDP_BENCH_CACHE", str(tmp_path))
    monkeypatch.syspath_prepend(str(ROOT))
    for name in [m for m in sys.modules if m == "benchmarks" or m.startswith("benchmarks.")]:
        monkeypatch.delitem(sys.modules, name)
    package = importlib.import_module("benchmarks")
    modules = [importlib.import_module(f"benchmarks.{info.name}")
               for info in pkgutil.iter_modules(package.__path__)]
    yield modules
    for name in [m for m in sys.modules if m == "benchmarks" or m.startswith("benchmarks.")]:
        sys.modules.pop(name, None)


def _classes(modules):
    for module in modules:
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__ and not name.startswith("_") and any(
                    attr.startswith(PREFIXES) for attr in dir(cls)):
                yield cls


def test_asv_config_is_json():
    import json
    import re
    text = (ROOT / "asv.conf.json").read_text()
    config = json.loads(re.sub(r"^\s*//.*$", "", text, flags=re.M))
    assert config["environment_type"] == "existing"
    assert (ROOT / config["benchmark_dir"]).is_dir()


@pytest.mark.slow     # every suite's setup and one benchmark: about 4 s (the imports above stay)
def test_every_suite_runs_at_tiny_size(suites):
    from benchmarks import common
    assert common.TINY
    classes = list(_classes(suites))
    names = {cls.__name__ for cls in classes}
    assert {"CoreRelease", "HingeRelease", "CorrelatedRelease", "RankRelease", "Mechanisms",
            "MechanismRatio", "Comparators", "Memory"} <= names
    for cls in classes:
        params = getattr(cls, "params", [])
        assert len(params) == len(getattr(cls, "param_names", [])), cls
        combos = list(itertools.product(*params)) or [()]
        methods = sorted(attr for attr in dir(cls) if attr.startswith(PREFIXES))
        picks = [combos[0]]
        if getattr(cls, "timeout", 60) >= common.LONG_TIMEOUT:
            picks.append(combos[-1])
        if cls.__name__ == "Comparators":
            picks = [(method, params[1][0]) for method in params[0]]
        for combo in picks:
            bench = cls()
            bench.setup(*combo)
            for method in methods:
                getattr(bench, method)(*combo)
