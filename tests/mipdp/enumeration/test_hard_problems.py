"""Issue 11's hard problems, small enough for brute force, on both enumeration paths.

Small versions of ``experiments.studies.bench_hard``'s rows: the hinge demo (seed 002's
classification design), breast cancer (standardised, clipped to 0.5, λ = 1, r = 2),
digits 3 vs 8 (pixels/16 − 0.5, with constant — hence identical — border columns) and least
squares on pure noise.  Each is checked against brute force over all C(p, s) supports for
top-R (several R), the exact mistake-class minima and the validity of the exponential
mechanism's envelope, through master solves only (``explicit_max=0``) and through the
explicit region search (the default for small regions), on HiGHS (every backend for two).
"""

import numpy as np
import pytest

from mipdp._validation import clip_data
from mipdp.brute_force import all_supports
from mipdp.datasets import make_bss_classification
from mipdp.enumeration import SupportEnumerator, default_R
from mipdp.enumeration.envelope import build_envelope
from mipdp.losses import Hinge, LeastSquares

PATHS = {"mip": dict(exhaustive_max=0, explicit_max=0), "explicit": dict(exhaustive_max=0)}
B = 0.5


def hinge_demo():
    X, y, _ = make_bss_classification(n=300, p=12, s=3, random_state=0)
    X, _ = clip_data(X, None, B, None)
    return X, y, Hinge(120.0, 1.1), 3


def cancer():
    from sklearn.datasets import load_breast_cancer
    d = load_breast_cancer()
    rng = np.random.default_rng(0)
    rows = rng.choice(d.data.shape[0], 150, replace=False)
    X = d.data[rows][:, :12]
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    X, _ = clip_data(X, None, B, None)
    return X, np.where(d.target[rows] == 1, 1.0, -1.0), Hinge(1.0, 2.0), 3


def digits():
    from sklearn.datasets import load_digits
    d = load_digits()
    keep = np.flatnonzero(np.isin(d.target, (3, 8)))[:120]
    X = d.data[keep] / 16.0 - 0.5
    const = np.flatnonzero(X.std(axis=0) == 0)[:3]          # identical constant columns
    varied = np.argsort(-X.std(axis=0))[:9]
    X = X[:, np.r_[const, varied]]
    assert np.ptp(X[:, :3]) == 0
    return X, np.where(d.target[keep] == 3, 1.0, -1.0), Hinge(1.0, 2.0), 3


def noise():
    rng = np.random.default_rng(0)
    X, y = clip_data(rng.standard_normal((100, 12)), rng.standard_normal(100), B, B)
    return X, y, LeastSquares(120.0, 1.1), 3


PROBLEMS = {"hinge_demo": hinge_demo, "cancer": cancer, "digits": digits, "noise": noise}


@pytest.fixture(scope="module", params=list(PROBLEMS))
def problem(request):
    X, y, loss, s = PROBLEMS[request.param]()
    obj = loss.bind(X, y)
    sup = all_supports(X.shape[1], s)
    return request.param, X, y, loss, s, sup, obj.values(sup)


def _enum(problem, path, backend="highs"):
    _, X, y, loss, s, _, _ = problem
    scale = loss.sensitivity(X.shape[0], s, B, B)
    return SupportEnumerator(loss.bind(X, y), s, scale=scale, backend=backend, **PATHS[path])


def _check(problem, path, backend="highs"):
    name, X, y, loss, s, sup, vals = problem
    p = X.shape[1]
    order = np.sort(vals)
    for R in (7, default_R(p, s) + 25):
        top = _enum(problem, path, backend).top_supports(R)
        np.testing.assert_allclose(top.values, order[:R], rtol=1e-9, atol=1e-12)
        index = {tuple(S): v for S, v in zip(sup.tolist(), vals, strict=True)}
        for S, v in zip(top.supports.tolist(), top.values, strict=True):
            assert index[tuple(S)] == pytest.approx(v, rel=1e-9, abs=1e-12)
    enum = _enum(problem, path, backend)
    ms = enum.mistake_scores()
    c = set(ms.center.tolist())
    assert index[tuple(ms.center.tolist())] == pytest.approx(order[0], rel=1e-9, abs=1e-12)
    k = np.array([s - len(c.intersection(S)) for S in sup.tolist()])
    exact = [vals[k == j].min() for j in range(min(s, p - s) + 1)]
    np.testing.assert_allclose(ms.scores, exact, rtol=1e-9, atol=1e-12)
    env = build_envelope(_enum(problem, path, backend), 1.0, loss.sensitivity(X.shape[0], s, B, B))
    for R in env.regions:
        assert R.bound <= vals[R.contains(sup)].min() + 1e-9


@pytest.mark.parametrize("path", list(PATHS))
def test_matches_brute_force(problem, path):
    _check(problem, path)


@pytest.mark.parametrize("path", list(PATHS))
def test_matches_brute_force_every_backend(problem, path, backend):
    if backend == "highs" or problem[0] not in ("digits", "noise"):
        pytest.skip("HiGHS above; two problems on the other backends")
    _check(problem, path, backend)
