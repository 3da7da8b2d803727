"""``import mipdp`` stays light: no scikit-learn, pandas, dask, scipy or solver at startup.

The public names are imported on first use (PEP 562 ``__getattr__`` in ``mipdp/__init__``);
a subprocess checks ``sys.modules`` (rather than a timed test, which would be flaky on a
loaded machine).
"""

import json
import subprocess
import sys

import pytest

HEAVY = ("sklearn", "pandas", "dask", "gurobipy", "pyomo", "scipy", "highspy", "pyarrow")


def _loaded(code: str) -> list[str]:
    probe = (f"{code}\nimport json, sys\n"
             f"print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_mipdp_loads_no_heavy_package():
    assert _loaded("import mipdp") == []


def test_private_bss_import_loads_no_sklearn_pandas_or_solvers():
    loaded = _loaded("from mipdp import private_bss")
    assert not set(loaded) & {"sklearn", "pandas", "dask", "gurobipy", "pyomo"}


@pytest.mark.parametrize("name", ["private_bss", "PrivateBestSubsetSelector", "comparators",
                                  "Guarantee", "BudgetAccountant", "PrivateBounds",
                                  "private_coefficients", "set_verbosity", "SelectionResult"])
def test_public_names_resolve_lazily(name):
    import mipdp
    assert getattr(mipdp, name) is not None
    assert name in dir(mipdp)


def test_unknown_attribute_raises():
    import mipdp
    with pytest.raises(AttributeError, match="no_such_name"):
        mipdp.no_such_name  # noqa: B018
