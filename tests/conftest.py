"""Shared fixtures: small regression instances of several kinds."""

import numpy as np
import pytest

from mipdp import solvers


def make_instance(seed: int, n: int = 60, p: int = 9, kind: str = "well", b: float = 0.5):
    """A small clipped regression problem: ``kind`` in well / ill / ties / dense."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    if kind == "ill":  # near-collinear columns
        X[:, 1] = X[:, 0] + 1e-3 * rng.normal(size=n)
        X[:, 3] = 0.5 * X[:, 2] + 0.5 * X[:, 4] + 1e-4 * rng.normal(size=n)
    elif kind == "ties":  # duplicated columns give exactly tied supports
        X[:, 5] = X[:, 0]
        X[:, 6] = X[:, 1]
    beta = np.zeros(p)
    beta[rng.choice(p, 3, replace=False)] = rng.choice([-1.0, 1.0], 3)
    y = X @ beta * 0.4 + 0.5 * rng.normal(size=n)
    X = np.clip(X * 0.4, -b, b)
    y = np.clip(y, -b, b)
    return X, y


BACKENDS = solvers.available_backends()


@pytest.fixture(params=BACKENDS)
def backend(request):
    """Every installed MIP backend."""
    return request.param


@pytest.fixture
def instance():
    """The :func:`make_instance` factory."""
    return make_instance


#: the optional backends: the package's tests run them in the slow set (``-m slow``);
#: their own contract tests (tests/solvers/) and the privacy audits run them by default
OTHER_BACKENDS = ("gurobi", "pyomo")
#: a test whose name holds one of these is a privacy audit: it runs on every backend
AUDIT_WORDS = ("audit", "law", "within_eps", "privacy", "_dp", "neighbour", "pairs")


def pytest_collection_modifyitems(config, items):
    """The default run checks the package on the default backend (HiGHS).

    A test of ``tests/mipdp/`` parametrized by another installed backend (its id names
    ``gurobi`` or ``pyomo``) is marked slow, unless it is a privacy audit: the same
    code runs on every backend, the backends' answers are compared by their contract
    tests (tests/solvers/, every backend by default), and ``pytest -m slow`` runs the rest
    (about 40 s of the default run's 340 s of tests, issue 38).
    """
    import re
    pattern = re.compile(r"\[[^\]]*\b(" + "|".join(OTHER_BACKENDS) + r")\b[^\]]*\]")
    for item in items:
        path = item.nodeid.split("::")[0]
        if not path.startswith("tests/mipdp/") or not pattern.search(item.nodeid):
            continue
        name = getattr(item, "originalname", item.name)
        if any(word in name for word in AUDIT_WORDS):
            continue
        item.add_marker(pytest.mark.slow)
