"""``n_jobs``: scikit-learn's semantics, the same release for every ``n_jobs`` on every
backend, and the exact law with two workers."""

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import chisquare

from mipdp import PrivateBestSubsetSelector, private_bss, solvers
from mipdp._parallel import current_n_jobs, effective_n_jobs, n_jobs_context, parallel_map
from mipdp.brute_force import all_supports
from mipdp.data import ClippedDesign
from mipdp.enumeration import SupportEnumerator
from mipdp.enumeration.envelope import build_envelope
from mipdp.exceptions import InvalidParameterError
from mipdp.losses import LeastSquares
from mipdp.mechanisms import ExponentialMechanismSampler, PermuteAndFlipSampler

B = 0.5


def test_effective_n_jobs_has_scikit_learns_semantics(monkeypatch):
    import mipdp._parallel as par
    monkeypatch.setattr(par, "cpu_count", lambda: 8)
    assert [effective_n_jobs(k) for k in (None, 1, 3, -1, -2, -8, -20)] == [1, 1, 3, 8, 7, 1, 1]
    with pytest.raises(ValueError, match="n_jobs"):
        effective_n_jobs(0)


def test_n_jobs_is_checked_before_the_data():
    for bad in (0, 1.5, "2", True and 0):
        with pytest.raises(InvalidParameterError, match="n_jobs"):
            private_bss(None, None, 2, 1.0, bounds=(B, B), n_jobs=bad)
    sel = PrivateBestSubsetSelector(s=2, n_jobs=-1)
    assert sel.get_params()["n_jobs"] == -1
    with pytest.raises(InvalidParameterError, match="n_jobs"):
        PrivateBestSubsetSelector(s=2, n_jobs=0).fit(np.zeros((5, 4)), np.zeros(5))


def test_parallel_map_keeps_order_and_does_not_nest():
    with n_jobs_context(3):
        assert current_n_jobs() == 3
        out = parallel_map(lambda x: (x * x, current_n_jobs()), range(20))
    assert [o[0] for o in out] == [x * x for x in range(20)]
    assert all(o[1] == 1 for o in out)      # a worker never starts another pool
    assert current_n_jobs() == 1


def test_first_pass_by_column_blocks_is_bit_identical(monkeypatch):
    """The clipping pass runs column blocks on the workers: the same figures, bit for bit."""
    import mipdp.data as data
    monkeypatch.setattr(data, "TILE_BYTES", 4096)
    rng = np.random.default_rng(0)
    X = np.asfortranarray(rng.normal(size=(200, 90)))
    v = rng.normal(size=200)
    out = {}
    for k in (1, 2, 4):
        with n_jobs_context(k):
            D = ClippedDesign(X, 0.8, dense_cache_bytes=0, vectors=[v])
            out[k] = (D.col_sq().copy(), D.rmatvec(v), D.gram_matvec(np.ones(90)))
    for k in (2, 4):
        for a, b in zip(out[1], out[k], strict=True):
            np.testing.assert_array_equal(a, b)


def _draws(obj, s, eps, scale, backend, sampler, k, n_draws=40):
    with n_jobs_context(k):
        enum = SupportEnumerator(obj, s, scale=scale, backend=backend, exhaustive_max=0,
                                 explicit_max=0)
        env = build_envelope(enum, eps, scale, full_class_max=0)
        smp = sampler(obj.values, env.singletons, env.values, env.regions, obj.p, eps, scale,
                      refine=env.refine, cuts=env.cuts)
        bounds = [R.bound for R in env.regions]
        return bounds, smp.sample(np.random.default_rng(5), n_draws)


@pytest.mark.parametrize("backend", solvers.available_backends())
def test_same_release_for_every_n_jobs_on_every_backend(instance, backend):
    """Envelope bounds and draws are identical for n_jobs in {1, 2, 4} (small models: the
    pip Gurobi licence caps them at 2000 variables and constraints)."""
    X, y = instance(3, n=80, p=12, kind="ill")
    loss = LeastSquares(5.0, 1.1)
    obj = loss.bind(X, y)
    scale = loss.sensitivity(X.shape[0], 3, B, B)
    samplers = [ExponentialMechanismSampler] + ([PermuteAndFlipSampler]
                                                if backend == "highs" else [])
    for sampler in samplers:
        ref = _draws(obj, 3, 2.0, scale, backend, sampler, 1)
        assert ref[0]             # regions bounded by the backend
        for k in (2, 4):
            got = _draws(obj, 3, 2.0, scale, backend, sampler, k)
            assert got[0] == ref[0]
            np.testing.assert_array_equal(got[1], ref[1])


@pytest.mark.parametrize("method", ["exponential", "permute_and_flip"])
def test_private_bss_same_release_for_every_n_jobs(method):
    """End to end (full classes evaluated in chunks on the workers, warm start by blocks)."""
    from mipdp.datasets import make_bss_regression
    X, y, _ = make_bss_regression(n=300, p=40, s=3, rho=0.5, random_state=1)
    out = [private_bss(X, y, 3, 1.0, bounds=(B, B), n_draws=20, random_state=3,
                       method=method, n_jobs=k).supports for k in (1, 2, 4, -1)]
    for o in out[1:]:
        np.testing.assert_array_equal(o, out[0])


def test_sampler_law_with_two_workers(instance):
    """Chi-square of the exponential mechanism's draws against brute force, envelope built
    and sampled with n_jobs=2."""
    X, y = instance(1, n=60, p=9, kind="ill")
    loss = LeastSquares(5.0, 1.1)
    obj = loss.bind(X, y)
    s, eps = 3, 2.0
    scale = loss.sensitivity(X.shape[0], s, B, B)
    sup = all_supports(9, s)
    vals = obj.values(sup)
    lw = -eps * (vals - vals.min()) / (2 * scale)
    logp = lw - logsumexp(lw)
    _, draws = _draws(obj, s, eps, scale, "highs", ExponentialMechanismSampler, 2, 3000)
    index = {tuple(r): i for i, r in enumerate(sup.tolist())}
    counts = np.bincount([index[tuple(r)] for r in draws.tolist()], minlength=len(sup))
    exp = np.exp(logp) * counts.sum()
    big = exp >= 5
    obs, ex = counts, exp
    if (~big).any():
        obs, ex = np.r_[counts[big], counts[~big].sum()], np.r_[exp[big], exp[~big].sum()]
    assert chisquare(obs, ex * obs.sum() / ex.sum()).pvalue > 1e-3


def test_comparators_take_n_jobs_and_release_the_same():
    from mipdp.comparators import dp_kendall, dp_sis, mcmc, two_stage
    from mipdp.datasets import make_bss_regression
    X, y, _ = make_bss_regression(n=300, p=20, s=3, random_state=0)
    for f, kw in [(two_stage, {}), (dp_sis, {"bounds": (B, B)}), (dp_kendall, {}),
                  (mcmc, {"bounds": (B, B), "n_iter": 30})]:
        out = [f(X, y, 3, 1.0, random_state=2, n_jobs=k, **kw).support for k in (1, 2, -1)]
        assert all(np.array_equal(out[0], o) for o in out), f.__name__
        with pytest.raises(InvalidParameterError, match="n_jobs"):
            f(X, y, 3, 1.0, n_jobs=0, **kw)
