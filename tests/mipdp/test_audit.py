"""The privacy audit harness and the propose-test-release guard of the mistakes sampler."""

import math
import warnings

import numpy as np
import pytest

from mipdp import ConditionalPrivacyWarning, audit, private_bss, solvers
from mipdp.brute_force import least_squares_value
from mipdp.mechanisms import ptr_distance, ptr_test

B = audit.B


# ----------------------------------------------------------------- helpers
def test_divergences():
    lp = np.log([0.5, 0.25, 0.25])
    lq = np.log([0.25, 0.5, 0.25])
    assert audit.max_abs_log_ratio(lp, lq) == pytest.approx(math.log(2))
    assert audit.max_abs_log_ratio(lp, lp) == 0.0
    assert audit.max_abs_log_ratio([0.0, -np.inf], [0.0, -np.inf]) == 0.0
    assert audit.max_abs_log_ratio([np.log(0.5)] * 2, [0.0, -np.inf]) == math.inf
    assert audit.hockey_stick(lp, lq, 0.0) == pytest.approx(0.25)
    assert audit.hockey_stick(lp, lq, math.log(2)) == pytest.approx(0.0, abs=1e-15)


def test_clopper_pearson_bound():
    assert audit.clopper_pearson_epsilon(500, 1000, 500, 1000) == 0.0
    lb = audit.clopper_pearson_epsilon(800, 1000, 100, 1000)
    assert 0 < lb < math.log(8)


def test_exact_audits_are_within_claim():
    rows = (audit.audit_topk(eps_values=(1.0,), d=5)
            + audit.audit_dp_kendall(seeds=(0,), p=4)
            + audit.audit_noisy_iht(seeds=(0,), neighbours=("replace-one",))
            + audit.audit_top_r(seeds=(0,), kinds=("ties",), Rs=(None, 1), n_random=1,
                                n_corner=1, path="exhaustive"))
    assert rows and all(r["within_claim"] for r in rows), rows
    assert set(audit.COLUMNS) <= set(rows[0])
    # the top-k audit has power: on the L∞ ball's vertices the loss comes close to ε
    assert max(r["worst_log_ratio"] for r in rows[:4]) > 0.9
    assert rows[-1]["backend"] == "exhaustive"
    assert all(r["backend"] == "—" for r in rows[:-1])


def test_mip_rows_run_the_mip_backend():
    """The private_bss rows must audit outer approximation, not only the exhaustive path.

    The audit instances have C(p, s) = 15 supports, below the exhaustive threshold: without
    ``exhaustive_max = 0`` every call would report ``stats["backend"] == "exhaustive"``.
    """
    top = audit.audit_top_r(seeds=(0,), kinds=("near_tie",), Rs=(None, "all"), n_random=1,
                            n_corner=1, path="mip")
    mis = audit.audit_mistakes(seeds=(0,), n_random=1, n_corner=1, path="mip")
    em = audit.audit_exponential(seeds=(0,), kinds=("near_tie",), n_random=1, n_corner=1,
                                 path="mip")
    for row in top + mis + em:
        assert row["backend"] == "highs", row
        assert row["within_claim"] and row["pairs"] > 0, row
    md = audit.to_markdown(top + mis + em)
    assert md.count("MIP (highs)") == 3 and "exhaustive" not in md
    # the paths differ only in the enumeration: same exact law on the same data
    X, y = audit._instance("ties", 0, 40, 6)
    used = set()
    lp_mip, _ = audit._bss_log_probs(X, y, 2, 1.0, path="mip", used=used)
    lp_exh, _ = audit._bss_log_probs(X, y, 2, 1.0, path="exhaustive", used=used)
    assert used == {"highs", "exhaustive"}
    np.testing.assert_allclose(lp_mip, lp_exh, atol=1e-6)
    with pytest.raises(ValueError, match="path"):
        audit.audit_top_r(path="gurobi")


def test_audit_detects_a_miscalibrated_mechanism():
    """Negative control: scores that move by 2Δ while Δ is claimed must show a violation."""
    from mipdp.mechanisms import gumbel_peeling_topk_distribution
    eps, sens = 1.0, 1.0
    f = np.array([3.0, 2.0, 1.0, 0.0, -1.0])
    base = gumbel_peeling_topk_distribution(f, 2, eps, sens)[1]
    worst = max(audit.max_abs_log_ratio(
        base, gumbel_peeling_topk_distribution(f + 2 * sens * np.array(sh), 2, eps, sens)[1])
        for sh in [(1, 1, -1, -1, -1), (-1, -1, 1, 1, 1), (1, -1, 1, -1, 1)])
    assert worst > eps + 0.5


def test_markdown_table():
    rows = audit.audit_topk(eps_values=(1.0,), d=4)
    md = audit.to_markdown(rows)
    assert md.count("\n") == len(rows) + 1 and "within claim" in md


# ----------------------------------------------------------------- PTR guard
def _flipping_pair():
    """Near-tie data and a neighbour (one replaced row) on which the optimum differs."""
    s = 1
    X, y = audit._instance("near_tie", 0, 40, 5)
    rng = np.random.default_rng(0)

    def best(A, b):
        return int(np.argmin([least_squares_value(A, b, [j], 1.0, 1.1) for j in range(5)]))

    b0 = best(X, y)
    for _ in range(200):
        i = int(rng.integers(40))
        Xn, yn = X.copy(), y.copy()
        Xn[i] = rng.choice([-B, B], size=5)
        yn[i] = rng.choice([-B, B])
        if best(Xn, yn) != b0:
            return s, X, y, Xn, yn
    raise AssertionError("no flipping neighbour found")  # pragma: no cover


def test_ptr_falls_back_when_the_optimum_flips():
    s, X, y, Xn, yn = _flipping_pair()
    eps, eps_test, delta = 1.0, 0.5, 1e-3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConditionalPrivacyWarning)
        for A, b in ((X, y), (Xn, yn)):
            res = private_bss(A, b, s, eps, bounds=(B, B), ridge=1.0, method="mistakes",
                              report_gap=True, random_state=0)
            gap, sens = res.info["gap_not_private"], res.sensitivity
            assert ptr_distance(gap, sens) == 0.0          # unstable: d = 0
            rng = np.random.default_rng(12345)
            n = 20000
            passes = sum(ptr_test(gap, sens, eps_test, delta, rng) for _ in range(n))
            # P(pass) = δ/2 exactly when d = 0: mean 10 passes, 40 is > 9 sd away
            assert passes <= 40, passes
    # end to end: the guarded call runs top-R (with these seeds; each passes w.p. δ/2)
    for seed in range(5):
        res = private_bss(Xn, yn, s, eps, bounds=(B, B), ridge=1.0, method="mistakes",
                          delta=delta, eps_test=eps_test, random_state=seed)
        assert res.info["method_run"] == "top_r"
        assert res.info["ptr_passed"] is False
        assert res.epsilon == pytest.approx(eps + eps_test) and res.delta == delta
        assert res.R is not None


def test_ptr_passes_on_a_stable_optimum():
    X, y = audit._instance("strong", 0, 400, 5)
    res = private_bss(X, y, 2, 1.0, bounds=(B, B), ridge=1.0, method="mistakes", delta=1e-3,
                      eps_test=5.0, random_state=0)
    assert res.info["ptr_passed"] is True and res.info["method_run"] == "mistakes"


#: the regions path on every backend; the "mip" path (its rows are covered on HiGHS above)
#: in the slow suite
ENVELOPE_ROWS = [pytest.param(b, path, id=f"{b}-{path}",
                              marks=[pytest.mark.slow] if path == "mip" else [])
                 for b in solvers.available_backends() for path in ("mip", "regions")]


@pytest.mark.parametrize("backend,path", ENVELOPE_ROWS)
def test_envelope_rows_on_both_paths_every_backend(backend, path):
    """Issue 28 (7): the exponential and permute-and-flip rows on both envelope paths (small
    classes evaluated in full, or every class bounded by certified MIP region bounds with
    full_class_max = 0) on every backend: within the claim, and the same exact law as the
    exhaustive path."""
    kw = dict(seeds=(0,), kinds=("near_tie",), n_random=1, n_corner=1, path=path,
              backend=backend)
    rows = audit.audit_exponential(**kw) + audit.audit_permute_and_flip(**kw)
    for row in rows:
        assert row["backend"] == backend and row["within_claim"] and row["pairs"] > 0, row
    X, y = audit._instance("ties", 0, 40, 6)
    for method in ("exponential", "permute_and_flip"):
        lp, res = audit._bss_log_probs(X, y, 2, 1.0, method=method, path=path, backend=backend)
        assert bool(res.mechanism.regions) == (path == "regions")
        lp_exh, _ = audit._bss_log_probs(X, y, 2, 1.0, method=method, path="exhaustive")
        np.testing.assert_allclose(lp, lp_exh, atol=1e-6)
