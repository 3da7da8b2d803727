"""End-to-end benchmark of private sparse linear models: test R² on real data (issue 40).

For every regression set of :mod:`mipdp.experiments.real_sets`, every total ``ε`` and
``s``, and ``splits`` random 90/10 train/test splits (the protocol of Dick, Gillenwater and
Joseph 2023, "Better private linear regression through better private feature
selection"), each method fits on the training rows and is scored by test R²:

* ``model`` — :class:`mipdp.PrivateSparseRegression` with its defaults (support by the
  bounds-free rank release, coefficients by the Tukey mechanism) at ``(ε, δ)``;
* ``model_private`` — the same with ``bounds="private"`` (pure ε: private clipping ranges,
  objective perturbation);
* ``model_public`` — the same with ``bounds=(0.5, 0.5)`` on the data mapped by the
  sets' public ranges (:meth:`~mipdp.experiments.real_sets.RealData.mapped`; a range marked
  "observed" there is the data's min/max used *as if* public, a benchmark convenience);
  test R² on the original scale of ``y``;
* ``kendall_tukey`` — DPKendall with 5 % of ``ε``, the private choice of the number of
  models with 5 %, the Tukey mechanism with the rest (their budget split; under
  replace-one neighbours ``n`` is public and the Tukey mechanism spends nothing on ``m``,
  so its share is 95 %);
* ``tukey_all`` — the Tukey mechanism on all columns (``m_fraction=0.05``, spent only
  under add/remove neighbours);
* ``ols_best`` — non-private OLS on the exhaustive best subset of the training rows;
* ``constant`` — the constant predictor, R² = 0 by definition.

A refusal of the Tukey mechanism's propose-test-release check leaves the analyst with no
model, i.e. the constant predictor: it is scored R² = 0 and counted in ``refused``.

Run (writes ``OUT/cells/*.json`` and ``OUT/tables.md``)::

    python -m mipdp.experiments.model_bench --out results/model_bench

``--classification`` measures :class:`mipdp.PrivateSparseClassifier` (test accuracy)
on the classification sets.  ``--speed`` times a default fit at ``n = 10⁵, p = 100,
s = 5`` against its selection alone.  ``--fractions 0.1 0.25 0.5`` adds ``model@f`` rows
(``selection_fraction=f``) to choose the default split.  Every figure is an evaluation
quantity computed without noise: **not private**.
"""

from __future__ import annotations

import argparse
import json
import math
import time
import warnings
from pathlib import Path

import numpy as np

from ..exceptions import PTRRefusedError

__all__ = ["METHODS", "run_method", "run_bench", "render_table", "main"]

METHODS = ("model", "model_private", "model_public", "kendall_tukey", "tukey_all", "ols_best",
           "constant")
DELTA = 1e-5


def _r2(y, pred) -> float:
    from sklearn.metrics import r2_score
    pred = np.asarray(pred, dtype=float)
    if not np.all(np.isfinite(pred)):
        return -math.inf
    return float(r2_score(y, pred))


def _ols(Xtr, ytr, Xte):
    A = np.column_stack([Xtr, np.ones(len(Xtr))])
    coef, *_ = np.linalg.lstsq(A, ytr, rcond=None)
    return np.column_stack([Xte, np.ones(len(Xte))]) @ coef


def run_method(method: str, Xtr, ytr, Xte, yte, s: int, eps: float, seed: int,
               delta: float = DELTA) -> dict:
    """``{"r2", "refused", "seconds"}`` of one method on one split."""
    t0 = time.perf_counter()
    refused = False
    try:
        if method == "constant":
            r2 = 0.0
        elif method == "ols_best":
            from .real_bench import best_subset
            S, _ = best_subset(Xtr, ytr, s)
            r2 = _r2(yte, _ols(Xtr[:, S], ytr, Xte[:, S]))
        elif method.startswith("model"):
            from ..estimators import PrivateSparseRegression
            kw: dict = {}
            if method == "model_private":
                kw["bounds"] = "private"
            elif method == "model_public":
                return _public_model(Xtr, ytr, Xte, yte, s, eps, seed, delta, t0)
            elif "@" in method:
                kw["selection_fraction"] = float(method.split("@", 1)[1])
            est = PrivateSparseRegression(s=s, eps=eps, delta=delta, random_state=seed, **kw)
            r2 = _r2(yte, est.fit(Xtr, ytr).predict(Xte))
        elif method == "kendall_tukey":
            from ..comparators import dp_kendall
            from ..tukey import tukey_regression
            rng = np.random.default_rng(seed)
            S = np.sort(dp_kendall(Xtr, ytr, s, 0.05 * eps, random_state=rng).support)
            t = tukey_regression(Xtr[:, S], ytr, 0.95 * eps, delta, m_fraction=0.05 / 0.95,
                                 random_state=rng)
            r2 = _r2(yte, Xte[:, S] @ t.coef + t.intercept)
        elif method == "tukey_all":
            from ..tukey import tukey_regression
            t = tukey_regression(Xtr, ytr, eps, delta, m_fraction=0.05, random_state=seed)
            r2 = _r2(yte, Xte @ t.coef + t.intercept)
        else:
            raise ValueError(f"method: unknown {method!r}; known: {METHODS} or model@f")
    except PTRRefusedError:
        r2, refused = 0.0, True
    return {"r2": r2, "refused": refused, "seconds": time.perf_counter() - t0}


def _public_model(Xtr, ytr, Xte, yte, s, eps, seed, delta, t0) -> dict:
    from ..estimators import PrivateSparseRegression
    lo, hi, (ly, hy) = _PUBLIC["lo"], _PUBLIC["hi"], _PUBLIC["y_range"]
    mid, width = (lo + hi) / 2.0, hi - lo
    Xu, Xv = (np.clip((A - mid) / width, -0.5, 0.5) for A in (Xtr, Xte))
    yu = np.clip((ytr - (ly + hy) / 2.0) / (hy - ly), -0.5, 0.5)
    est = PrivateSparseRegression(s=s, eps=eps, delta=delta, bounds=(0.5, 0.5),
                                  random_state=seed).fit(Xu, yu)
    pred = (ly + hy) / 2.0 + (hy - ly) * est.predict(Xv)
    return {"r2": _r2(yte, pred), "refused": False, "seconds": time.perf_counter() - t0}


#: the public ranges of the set being run (model_public)
_PUBLIC: dict = {}


def _cell(root: Path, name: str, method: str, s: int, eps: float, splits: int) -> dict:
    path = root / "cells" / f"{name}_{method}_s{s}_eps{eps:g}.json"
    if path.exists():
        return json.loads(path.read_text())
    from sklearn.model_selection import train_test_split

    from .real_sets import load_real_set
    data = load_real_set(name)
    _PUBLIC.update(lo=data.lo, hi=data.hi, y_range=data.y_range)
    rows = []
    for split in range(splits):
        Xtr, Xte, ytr, yte = train_test_split(data.X, data.y, test_size=0.1,
                                              random_state=split)
        seed = 1000 * split + 7
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rows.append(run_method(method, Xtr, ytr, Xte, yte, s, eps, seed))
    r2 = np.array([r["r2"] for r in rows])
    rec = {"data": name, "n": int(data.X.shape[0]), "p": int(data.X.shape[1]),
           "method": method, "s": s, "eps": eps, "delta": DELTA, "splits": splits,
           "r2": r2.tolist(), "median_r2": float(np.median(r2)),
           "mean_r2": float(np.mean(np.maximum(r2, -1e300))),
           "refused": int(sum(r["refused"] for r in rows)),
           "seconds": float(sum(r["seconds"] for r in rows))}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rec, indent=1))
    return rec


def run_bench(out, *, sets=None, methods=METHODS, eps=(1.0, 5.0), s=(3, 5),
              splits: int = 10) -> list[dict]:
    """Every cell (``sets × methods × s × eps``); cells already in ``out`` are reused."""
    from .real_sets import REAL_SETS
    root = Path(out)
    names = list(sets) if sets else [k for k, v in REAL_SETS.items() if v.task == "regression"]
    recs = []
    for name in names:
        for si in s:
            for e in eps:
                for m in methods:
                    recs.append(_cell(root, name, m, int(si), float(e), splits))
    return recs


def render_table(recs: list[dict]) -> str:
    """Markdown: median test R² per set, one column per method, per (s, ε)."""
    methods = list(dict.fromkeys(r["method"] for r in recs))
    lines = []
    for (si, e) in sorted({(r["s"], r["eps"]) for r in recs}):
        cell = {(r["data"], r["method"]): r for r in recs if r["s"] == si and r["eps"] == e}
        names = list(dict.fromkeys(r["data"] for r in recs))
        lines += [f"\n### s = {si}, ε = {e:g}, δ = {DELTA:g}: median test R² over "
                  f"{recs[0]['splits']} splits (refusals in brackets)\n",
                  "| set | n | p | " + " | ".join(methods) + " |",
                  "|---|---|---|" + "---|" * len(methods)]
        for nm in names:
            row = [nm, str(cell[(nm, methods[0])]["n"]), str(cell[(nm, methods[0])]["p"])]
            for m in methods:
                r = cell.get((nm, m))
                if r is None:
                    row.append("")
                    continue
                txt = f"{r['median_r2']:.3f}"
                if r["refused"]:
                    txt += f" [{r['refused']}]"
                row.append(txt)
            lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


CLASSIFIERS = ("clf_private", "clf_public", "svm_best", "majority")


def run_classifier(method: str, Xtr, ytr, Xte, yte, s: int, eps: float, seed: int,
                   lo=None, hi=None) -> float:
    """Test accuracy of one classification method on one split (labels ±1)."""
    if method == "majority":      # the training majority class (not private)
        return float(np.mean(yte == (1.0 if np.mean(ytr > 0) >= 0.5 else -1.0)))
    if method == "svm_best":      # non-private linear SVM on the exhaustive best subset
        from sklearn.svm import LinearSVC

        from .real_bench import best_subset
        S, _ = best_subset(Xtr, ytr, s, task="classification")
        mu, sd = Xtr[:, S].mean(0), Xtr[:, S].std(0) + 1e-12
        clf = LinearSVC().fit((Xtr[:, S] - mu) / sd, ytr)
        return float(clf.score((Xte[:, S] - mu) / sd, yte))
    from ..estimators import PrivateSparseClassifier
    if method == "clf_private":
        est = PrivateSparseClassifier(s=s, eps=eps, bounds="private",
                                      random_state=seed).fit(Xtr, ytr)
        return float(est.score(Xte, yte))
    if method == "clf_public":    # the sets' public ranges, mapped onto [-1/2, 1/2]
        mid, width = (lo + hi) / 2.0, hi - lo
        Xu, Xv = (np.clip((A - mid) / width, -0.5, 0.5) for A in (Xtr, Xte))
        est = PrivateSparseClassifier(s=s, eps=eps, bounds=0.5, random_state=seed).fit(Xu, ytr)
        return float(est.score(Xv, yte))
    raise ValueError(f"method: unknown {method!r}; known: {CLASSIFIERS}")


def classification_table(eps=(1.0, 5.0), s=(3, 5), splits: int = 10) -> str:
    """Median test accuracy on the benchmark's classification sets (markdown)."""
    from sklearn.model_selection import train_test_split

    from .real_sets import REAL_SETS, load_real_set
    names = [k for k, v in REAL_SETS.items() if v.task == "classification"]
    lines = []
    for si in s:
        for e in eps:
            lines += [f"\n### s = {si}, ε = {e:g}: median test accuracy over {splits} splits\n",
                      "| set | n | p | " + " | ".join(CLASSIFIERS) + " |",
                      "|---|---|---|" + "---|" * len(CLASSIFIERS)]
            for nm in names:
                d = load_real_set(nm)
                acc: dict[str, list[float]] = {m: [] for m in CLASSIFIERS}
                for split in range(splits):
                    Xtr, Xte, ytr, yte = train_test_split(d.X, d.y, test_size=0.1,
                                                          random_state=split)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        for m in CLASSIFIERS:
                            acc[m].append(run_classifier(m, Xtr, ytr, Xte, yte, si, e,
                                                         1000 * split + 7, d.lo, d.hi))
                lines.append(f"| {nm} | {d.X.shape[0]} | {d.X.shape[1]} | " + " | ".join(
                    f"{np.median(acc[m]):.3f}" for m in CLASSIFIERS) + " |")
    return "\n".join(lines) + "\n"


def speed(n: int = 100_000, p: int = 100, s: int = 5, eps: float = 1.0, reps: int = 5,
          seed: int = 0) -> dict:
    """Seconds of a default :class:`~mipdp.PrivateSparseRegression` fit against its
    selection alone (``private_bss`` with the same share of ``eps`` and seed), alternating,
    after one warm-up of each; medians of ``reps``."""
    from ..datasets import make_bss_regression
    from ..estimators import DEFAULT_SELECTION_FRACTION, PrivateSparseRegression
    from ..selection import private_bss
    X, y, _ = make_bss_regression(n=n, p=p, s=s, random_state=seed)
    sel, fit = [], []
    private_bss(X, y, s, DEFAULT_SELECTION_FRACTION * eps, random_state=0)      # warm-up
    PrivateSparseRegression(s=s, eps=eps, random_state=0).fit(X, y)
    for r in range(reps):
        t0 = time.perf_counter()
        private_bss(X, y, s, DEFAULT_SELECTION_FRACTION * eps, random_state=r)
        sel.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        PrivateSparseRegression(s=s, eps=eps, random_state=r).fit(X, y)
        fit.append(time.perf_counter() - t0)
    return {"n": n, "p": p, "s": s, "selection_s": float(np.median(sel)),
            "fit_s": float(np.median(fit)), "ratio": float(np.median(fit) / np.median(sel)),
            "ratio_each": [f / t for f, t in zip(fit, sel, strict=True)]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mipdp.experiments.model_bench",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="results/model_bench")
    ap.add_argument("--sets", nargs="*")
    ap.add_argument("--methods", nargs="*", default=list(METHODS))
    ap.add_argument("--fractions", nargs="*", type=float, default=[])
    ap.add_argument("--eps", nargs="*", type=float, default=[1.0, 5.0])
    ap.add_argument("--s", nargs="*", type=int, default=[3, 5])
    ap.add_argument("--splits", type=int, default=10)
    ap.add_argument("--speed", action="store_true",
                    help="time a fit at n = 1e5, p = 100, s = 5 against its selection alone")
    ap.add_argument("--classification", action="store_true",
                    help="test accuracy of PrivateSparseClassifier on the classification sets")
    a = ap.parse_args(argv)
    if a.classification:
        text = classification_table(eps=a.eps, s=a.s, splits=a.splits)
        Path(a.out).mkdir(parents=True, exist_ok=True)
        (Path(a.out) / "classification.md").write_text(text)
        print(text)
        return 0
    if a.speed:
        print(json.dumps(speed()))
        return 0
    methods = list(a.methods) + [f"model@{f:g}" for f in a.fractions]
    t0 = time.perf_counter()
    recs = run_bench(a.out, sets=a.sets, methods=methods, eps=a.eps, s=a.s, splits=a.splits)
    text = render_table(recs)
    Path(a.out).mkdir(parents=True, exist_ok=True)
    (Path(a.out) / "tables.md").write_text(text)
    print(text)
    print(f"{len(recs)} cells, {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":   # pragma: no cover
    raise SystemExit(main())
