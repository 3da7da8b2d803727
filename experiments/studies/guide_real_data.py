"""Worked examples of docs/guide.md on scikit-learn's bundled data sets.

Every data set is mapped into ``[-0.5, 0.5]`` by a **data-independent** affine map (ranges
from domain knowledge, fixed before the data is read; see the guide) and clipped there,
so ``bounds=(0.5, 0.5)`` holds by construction:

* ``diabetes`` (n = 442, p = 10), least squares and Huber, s = 3: the raw clinical
  variables (``load_diabetes(scaled=False)``) mapped by plausible clinical ranges; the
  target (disease progression) by the round range [0, 400] (the data set's description
  prints 25-346, a range computed from these very rows: for a real release take the range
  from the measurement's definition, not from the data);
* ``breast_cancer`` (n = 569, p = 30), hinge, s = 5: every feature by ``log10`` into
  ``[-3, 4]`` (a rule for positive measurements that needs no range per feature), labels
  ±1;
* ``digits 3 vs 8`` (n = 357, p = 64), hinge, s = 5: pixel values are 0..16 by the
  format, mapped by ``x/16 - 1/2``; labels ±1.

For each: one private release at ε = 1 (the default exponential mechanism) with its time
and guarantee; the non-private best support (**not private**: printed for the reader);
and the exponential mechanism's probability of releasing that best support at
ε = 1, 10, 100 (exact for least squares and Huber, where every support is
evaluated; certified bounds for the hinge loss, whose values are slower).

    python -m experiments.studies.guide_real_data
"""

from __future__ import annotations

import math
import time
import warnings

import numpy as np
from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits

from mipdp import BudgetAccountant, private_bss
from mipdp.experiments.metrics import SupportLoss

#: plausible clinical ranges of diabetes' raw variables (chosen without the data)
DIABETES_RANGES = {"age": (18, 90), "sex": (1, 2), "bmi": (15, 50), "bp": (60, 140),
                   "s1": (100, 350), "s2": (40, 250), "s3": (20, 100), "s4": (1, 10),
                   "s5": (3, 7), "s6": (50, 150)}


def to_unit_box(x, lo, hi):
    """``(x - mid) / (hi - lo)`` clipped to ``[-1/2, 1/2]`` (``lo``, ``hi`` public)."""
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    return np.clip((x - (lo + hi) / 2) / (hi - lo), -0.5, 0.5)


def datasets():
    d = load_diabetes(scaled=False)
    lo = [DIABETES_RANGES[f][0] for f in d.feature_names]
    hi = [DIABETES_RANGES[f][1] for f in d.feature_names]
    Xd = to_unit_box(d.data, lo, hi)
    yd = to_unit_box(d.target, 0, 400)
    bc = load_breast_cancer()
    Xb = to_unit_box(np.log10(np.maximum(bc.data, 1e-3)), -3, 4)
    yb = np.where(bc.target == 1, 1.0, -1.0)
    dg = load_digits()
    keep = np.isin(dg.target, (3, 8))
    Xg = dg.data[keep] / 16.0 - 0.5
    yg = np.where(dg.target[keep] == 8, 1.0, -1.0)
    return [("diabetes", "least_squares", Xd, yd, 3, list(d.feature_names)),
            ("diabetes", "huber", Xd, yd, 3, list(d.feature_names)),
            ("breast_cancer", "hinge", Xb, yb, 5, list(bc.feature_names)),
            ("digits 3 vs 8", "hinge", Xg, yg, 5, [f"pixel{i}" for i in range(64)])]


def main(argv=None) -> None:
    print("| data (n, p, s) | loss | release at ε = 1 (time) | non-private best (not private) "
          "| P(release = best) at ε = 1 / 10 / 100 |")
    print("|---|---|---|---|---|")
    for name, loss, X, y, s, names in datasets():
        n, p = X.shape
        kw = dict(bounds=(0.5, 0.5) if loss != "hinge" else (0.5, None), ridge=120.0,
                  radius=1.1, loss=loss)
        t0 = time.perf_counter()
        res = private_bss(X, y, s, 1.0, random_state=0, **kw)
        t_release = time.perf_counter() - t0
        best, _ = SupportLoss(X, y, s, loss=loss, bounds=(0.5, 0.5), ridge=120.0,
                              radius=1.1).best()
        probs = []
        for eps in (1.0, 10.0, 100.0):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = private_bss(X, y, s, eps, random_state=1, **kw)
            if loss != "hinge":   # exact: every support evaluated (C(p, s) <= 200 000)
                probs.append(f"{r.probability(best):.3g}")
            else:                 # hinge values cost ~10 ms each: certified bounds
                lo, hi = r.probability_bounds(best)
                probs.append(f"[{lo:.3g}, {hi:.3g}]")
        uniform = 1 / math.comb(p, s)
        print(f"| {name} ({n}, {p}, {s}) | {loss} | {[str(names[i]) for i in res.support]} "
              f"({t_release:.1f} s) | {[str(names[i]) for i in best]} | {' / '.join(probs)} "
              f"(uniform: {uniform:.2g}) |", flush=True)
        print(f"    guarantee: {res.guarantee}")

    # what model selection spends: every fit is a release (basic composition)
    name, loss, X, y, s, names = datasets()[0]
    acc = BudgetAccountant(epsilon=3.0)
    spent = []
    for s_try in (1, 2, 3, 4):
        try:
            private_bss(X, y, s_try, 1.0, bounds=(0.5, 0.5), random_state=s_try,
                        accountant=acc)
            spent.append(s_try)
        except Exception as exc:  # BudgetError: refused before the data is read
            print(f"s = {s_try}: refused: {type(exc).__name__}: {exc}")
    print(f"fits made for s in {spent}; accountant total: {acc.total()}; remaining "
          f"{acc.remaining()}")

    # a grid search under a default accountant: every clone's fit is a recorded release
    from sklearn.linear_model import LinearRegression
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline

    from mipdp import PrivateBestSubsetSelector
    pipe = make_pipeline(PrivateBestSubsetSelector(s=2, eps=1.0, bounds=(0.5, 0.5),
                                                   random_state=0), LinearRegression())
    gs = GridSearchCV(pipe, {"privatebestsubsetselector__s": [1, 2, 3]}, cv=3,
                      error_score="raise")
    acc = BudgetAccountant(epsilon=5.0)
    try:
        with acc:
            gs.fit(X, y)
    except Exception as exc:  # BudgetError
        print(f"GridSearchCV (3 values x 3 folds) under BudgetAccountant(epsilon=5): "
              f"{type(exc).__name__} after {len(acc)} recorded fits: {str(exc)[:120]}...")


if __name__ == "__main__":
    main()
