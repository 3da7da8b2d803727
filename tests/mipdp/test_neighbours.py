"""``neighbours="add_remove"`` in ``private_bss``: exact laws, privacy on add/remove pairs,
the monotone factor, bad input before the data, the record, the accountant and the audit.

The add/remove release uses weights ``exp(-ε F(S)/B)`` with the monotone sum-form score
``F = n·L`` (docs/privacy.md, "Add/remove neighbours"); replace-one keeps
``exp(-ε L(S)/(2B/n))``.  Laws are compared with the brute-force exponential mechanism of
:mod:`mipdp.brute_force` (independent code path) and across neighbouring datasets that
differ by one row added or removed.
"""

import math
import warnings

import numpy as np
import pytest

from mipdp import BudgetAccountant, InvalidParameterError, private_bss, selection, solvers
from mipdp.audit import (
    add_remove_neighbours,
    audit_exponential,
    audit_mistakes,
    audit_ptr_mistakes,
    audit_top_r,
)
from mipdp.brute_force import all_supports, exponential_mechanism_log_probs, least_squares_value
from mipdp.exceptions import BudgetError, ConditionalPrivacyWarning
from mipdp.guarantee import Guarantee, Neighbour
from mipdp.losses import LeastSquares

from .test_accounting import Untouchable

BOUNDS = (0.5, 0.5)
SCORE = {"ridge": 1.0, "radius": 1.1}
MIP = {"exhaustive_max": 0, "explicit_max": 0}
TOL = 1e-9
BACKENDS = solvers.available_backends()


def _data(seed, n=40, p=6, strong=False):
    rng = np.random.default_rng(seed)
    X = np.clip(rng.normal(size=(n, p)) * 0.4, -0.5, 0.5)
    beta = np.zeros(p)
    beta[:2] = [1.0, -1.0]
    noise = 0.02 if strong else 0.3
    y = np.clip(X @ beta * (1.0 if strong else 0.6) + noise * rng.normal(size=n), -0.5, 0.5)
    return X, y


def _law(X, y, s, eps, **kw):
    res = private_bss(X, y, s, eps, bounds=BOUNDS, random_state=0, **SCORE, **kw)
    return np.array([res.log_probability(S) for S in all_supports(X.shape[1], s)]), res


def _brute_em(X, y, s, eps, scale):
    vals = np.array([least_squares_value(X, y, S, **SCORE) for S in all_supports(X.shape[1], s)])
    return exponential_mechanism_log_probs(vals, eps, scale)


def _B(s):
    return LeastSquares(**SCORE).sample_bound(s, *BOUNDS)


# ------------------------------------------------------------------ exact laws
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("path", ["mip", "exhaustive"])
def test_add_remove_law_is_monotone_em(backend, path):
    """The add/remove release is the EM with scale B/(2n): weights exp(-ε n L / B)."""
    X, y = _data(0, n=30, p=6)
    s, eps = 2, 0.7
    kw = {"enumeration_options": MIP} if path == "mip" else {}
    lp, res = _law(X, y, s, eps, neighbours="add_remove", backend=backend, **kw)
    ref = _brute_em(X, y, s, eps, _B(s) / (2 * X.shape[0]))
    assert np.max(np.abs(lp - ref)) < 1e-7
    assert res.stats["backend"] == (backend if path == "mip" else "exhaustive")


def test_replace_one_factor_is_still_the_default():
    """Without ``neighbours`` the scale is B/n (the replace-one EM), not B/(2n)."""
    X, y = _data(1, n=30, p=6)
    s, eps = 2, 0.7
    lp, res = _law(X, y, s, eps)
    n = X.shape[0]
    assert np.max(np.abs(lp - _brute_em(X, y, s, eps, _B(s) / n))) < 1e-7
    assert np.max(np.abs(lp - _brute_em(X, y, s, eps, _B(s) / (2 * n)))) > 1e-3
    assert res.guarantee.neighbour is Neighbour.REPLACE_ONE
    assert res.sensitivity == pytest.approx(_B(s) / n)
    lp2, _ = _law(X, y, s, eps, neighbours="replace_one")
    np.testing.assert_array_equal(lp, lp2)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("method", ["exponential", "top_r"])
def test_add_remove_pairs_within_eps(backend, method):
    """max |log P(o|D) - log P(o|D')| <= ε over all supports, D' = D with a row added or
    removed (random, clipping corners, optimum-flipping), MIP path on every backend."""
    s, eps, p = 2, 1.0, 6
    N = math.comb(p, s)
    for seed in (0, 1):
        X, y = _data(seed, n=25, p=p)
        Rs = (None,) if method == "exponential" else (None, 1, N)
        kw = dict(neighbours="add_remove", backend=backend, enumeration_options=MIP,
                  method=method)
        base = {R: _law(X, y, s, eps, R=R, **kw)[0] for R in Rs}
        rng = np.random.default_rng(seed)
        pairs = list(add_remove_neighbours(X, y, rng, 2, 2, flip=_flip(s)))
        assert {lab.split()[0] for lab, _, _ in pairs} >= {"remove", "add", "flip"}
        for _, Xn, yn in pairs:
            assert abs(Xn.shape[0] - X.shape[0]) == 1
            for R in Rs:
                lp = _law(Xn, yn, s, eps, R=R, **kw)[0]
                assert np.max(np.abs(lp - base[R])) <= eps + TOL


def _flip(s):
    def score(X, y):
        v = np.sort([least_squares_value(X, y, S, **SCORE)
                     for S in all_supports(X.shape[1], s)])
        return float(v[0] - v[1])
    return score


@pytest.mark.parametrize("loss", ["hinge", "huber"])
def test_other_losses_add_remove_within_eps(loss):
    """The sum-form score is monotone for the hinge and Huber losses too (ℓ >= 0, ≤ B)."""
    s, eps = 2, 1.0
    X, y = _data(4, n=24, p=5)
    if loss == "hinge":
        y = np.where(y >= 0, 1.0, -1.0)
    kw = dict(loss=loss, neighbours="add_remove", bounds=BOUNDS, random_state=0,
              ridge=1.0, radius=1.0)
    sup = all_supports(X.shape[1], s)
    base = private_bss(X, y, s, eps, **kw)
    lp = np.array([base.log_probability(S) for S in sup])
    rng = np.random.default_rng(0)
    for _, Xn, yn in add_remove_neighbours(X, y, rng, 2, 3):
        if loss == "hinge":
            yn = np.where(yn >= 0, 1.0, -1.0)
        other = private_bss(Xn, yn, s, eps, **kw)
        lq = np.array([other.log_probability(S) for S in sup])
        assert np.max(np.abs(lp - lq)) <= eps + 1e-7


def test_mistakes_add_remove_stable_pairs():
    """Mistakes under add/remove: ε on pairs where n (L(S_(2)) - L(S_(1))) > B on both."""
    rows = audit_mistakes(seeds=(0, 1), n_random=2, n_corner=2, neighbours="add_remove")
    assert rows[0]["neighbour"] == "add/remove-one"
    assert rows[0]["pairs"] > 0 and rows[0]["within_claim"]


def test_sampler_draws_follow_add_remove_law():
    """Chi-square: the draws follow the exact add/remove law (exhaustive path)."""
    from scipy.stats import chisquare
    X, y = _data(2, n=30, p=5)
    s, eps = 2, 1.0
    res = private_bss(X, y, s, eps, bounds=BOUNDS, neighbours="add_remove", n_draws=4000,
                      random_state=7, **SCORE)
    sup = all_supports(5, s)
    probs = np.exp([res.log_probability(S) for S in sup])
    idx = {tuple(S): i for i, S in enumerate(sup.tolist())}
    counts = np.bincount([idx[tuple(S)] for S in res.supports.tolist()], minlength=len(sup))
    keep = probs * 4000 >= 5
    obs = np.r_[counts[keep], counts[~keep].sum()]
    exp_ = np.r_[probs[keep], probs[~keep].sum()] * 4000
    mask = exp_ > 0
    assert chisquare(obs[mask], exp_[mask] * obs[mask].sum() / exp_[mask].sum()).pvalue > 1e-3


# ------------------------------------------------------------------ the record
def test_guarantee_record_under_add_remove():
    X, y = _data(0)
    s, eps = 2, 0.5
    res = private_bss(X, y, s, eps, bounds=BOUNDS, neighbours="add_remove", n_draws=3, **SCORE)
    g = res.guarantee
    assert g.neighbour is Neighbour.ADD_REMOVE and g.is_pure
    assert g.epsilon == pytest.approx(1.5)
    assert g.sensitivity == pytest.approx(_B(s))        # B, not B/n: n is not public
    assert "monotone" in str(g)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConditionalPrivacyWarning)
        m = private_bss(X, y, s, eps, bounds=BOUNDS, neighbours="add_remove",
                        method="mistakes", **SCORE)
    assert m.guarantee.status == "conditional" and "> B" in m.guarantee.condition
    planned = selection.planned_guarantee(eps, n_draws=3, bounds=BOUNDS,
                                          neighbours="add_remove")
    assert planned.neighbour is Neighbour.ADD_REMOVE and planned.epsilon == pytest.approx(1.5)


def test_as_replace_one_conversion():
    g = Guarantee.pure(0.5, "add/remove", "em", sensitivity=1.0)
    r = g.as_replace_one()
    assert r.neighbour is Neighbour.REPLACE_ONE and r.epsilon == 1.0 and r.delta == 0.0
    assert "group privacy" in r.notes
    a = Guarantee.approximate(0.3, 1e-6, "add/remove", "x").as_replace_one()
    assert a.epsilon == pytest.approx(0.6)
    assert a.delta == pytest.approx((1 + math.exp(0.3)) * 1e-6)
    both = (g + Guarantee.pure(0.25, "add/remove", "y")).as_replace_one()
    assert both.epsilon == pytest.approx(1.5) and both.neighbour is Neighbour.REPLACE_ONE
    ro = Guarantee.pure(1.0, "replace-one", "z")
    assert ro.as_replace_one() is ro


def test_accountant_refuses_mixed_notions_unless_converted():
    X, y = _data(0)
    acc = BudgetAccountant(epsilon=3.0)
    private_bss(X, y, 2, 0.5, bounds=BOUNDS, accountant=acc, **SCORE)      # replace-one
    with pytest.raises(BudgetError, match="neighbour"):
        private_bss(Untouchable(), Untouchable(), 2, 0.5, bounds=BOUNDS, accountant=acc,
                    neighbours="add_remove", **SCORE)
    res = private_bss(X, y, 2, 0.5, bounds=BOUNDS, neighbours="add_remove", **SCORE)
    with pytest.raises(BudgetError, match="neighbour"):
        acc.spend(res.guarantee)
    acc.spend(res.guarantee.as_replace_one())                # explicit: 2 × 0.5
    assert acc.total().epsilon == pytest.approx(1.5)
    with pytest.raises(ValueError, match="neighbour"):
        res.guarantee + acc.spent[0]
    ar = BudgetAccountant(epsilon=1.0, neighbours="add_remove")
    private_bss(X, y, 2, 0.5, bounds=BOUNDS, accountant=ar, neighbours="add_remove", **SCORE)
    private_bss(X, y, 2, 0.5, bounds=BOUNDS, accountant=ar, neighbours="add_remove", **SCORE)
    assert ar.total().epsilon == pytest.approx(1.0)


# ------------------------------------------------------------------ bad input
D = Untouchable()


@pytest.mark.parametrize("bad", ["add_remove ", "bounded", "add-remove", 1, None])
def test_misspelt_neighbours_before_data(bad):
    with pytest.raises(InvalidParameterError, match="neighbours"):
        private_bss(D, D, 2, 1.0, bounds=BOUNDS, neighbours=bad)


def test_unsupported_method_refused_before_data(monkeypatch):
    import mipdp.plan.budget as budget  # where the plan reads the scales
    monkeypatch.setattr(budget, "ADD_REMOVE_SCALE", {"exponential": 0.5})
    with pytest.raises(InvalidParameterError, match="method='top_r'.*add/remove"):
        private_bss(D, D, 2, 1.0, bounds=BOUNDS, method="top_r", neighbours="add_remove")
    private_bss(*_data(0), 2, 1.0, bounds=BOUNDS, method="top_r", **SCORE)   # replace-one ok
    with pytest.raises(InvalidParameterError, match="neighbours"):
        budget.neighbour_scale_factor("top_r", "add_remove")
    assert selection.neighbour_scale_factor("top_r") == 1.0


def test_prescreen_refused_under_add_remove():
    with pytest.raises(InvalidParameterError, match="prescreen"):
        private_bss(D, D, 2, 1.0, bounds=BOUNDS, neighbours="add_remove",
                    prescreen=("kendall", 4, 0.2))


def test_selector_takes_neighbours():
    from mipdp.selector import PrivateBestSubsetSelector
    X, y = _data(0)
    sel = PrivateBestSubsetSelector(s=2, eps=1.0, bounds=BOUNDS, neighbours="add_remove",
                                    random_state=0, **SCORE).fit(X, y)
    assert sel.guarantee_.neighbour is Neighbour.ADD_REMOVE


# ------------------------------------------------------------------ audit rows
def test_audit_rows_add_remove():
    kw = dict(seeds=(0,), kinds=("ties", "near_tie"), n_random=1, n_corner=1,
              neighbours="add_remove")
    rows = audit_exponential(**kw) + audit_top_r(Rs=(None, 1), **kw)
    for r in rows:
        assert r["neighbour"] == "add/remove-one" and r["within_claim"] and r["pairs"] > 0
        assert r["backend"] == "highs"


def test_audit_ptr_mistakes_add_remove():
    """The PTR-guarded mistakes release under add/remove: exact δ at ε + ε₀ within δ."""
    row = audit_ptr_mistakes(seeds=(0,), n_random=1, n_corner=1, neighbours="add_remove")[0]
    assert row["neighbour"] == "add/remove-one" and row["within_claim"] and row["pairs"] > 0
