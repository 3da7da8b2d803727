"""Real-data benchmark: expected overlap with the exhaustive best subset (issue 29).

A configuration with ``kind = "real"`` (``experiments/studies.toml --study real_data``) runs, for
every real set of :mod:`mipdp.experiments.real_sets`, every ``s`` and ``ε`` and every
method, the **expected overlap** ``E|S ∩ S*| / s`` of one release ``S`` with the target
``S*``, and ``P(S = S*)``:

* **target** ``S*`` — regression: the exhaustive least-squares best subset (OLS with an
  intercept on standardised columns, every ``C(p, s)`` support); classification: the
  exhaustive best subset of the L2-regularised linear SVM with the squared hinge,
  ``argmin_{|S| = s} min_{β, b} Σ_i max(0, 1 − y_i(b + x_{i,S}ᵀβ))² + ½‖β‖²`` on
  standardised columns (:func:`best_subset`; the plain hinge's best subset is not unique
  on these sets);
* **methods** — ``public``: :func:`mipdp.private_bss` (exponential mechanism, default
  score) on the data mapped by the guide's midpoint rule with the public ranges of
  :mod:`~mipdp.experiments.real_sets`; ``ranks``: ``private_bss(X, y, bounds="ranks")`` on
  the raw data; ``private``: ``bounds="private"`` on the raw data; ``kendall``: DPKendall
  on the raw data; ``dp_sis``: DP-SIS on the mapped data with bounds ``(0.5, 0.5)``;
  ``noisy_iht``: the comparator registered under that name, on the mapped data with
  bounds ``(0.5, 0.5)`` (DP-SIS and noisy IHT treat ``±1`` labels as a regression target);
* **how it is measured** — *exact* where the law is known: the exponential mechanism's
  ``result.log_probability`` over all supports, DPKendall's law by a dynamic programme over
  the sets it can have chosen after each round (:func:`kendall_law`); the private ranges'
  law is exact given each release of the ranges and averaged over ``range_draws``
  releases (standard error over them); otherwise (DP-SIS, noisy IHT, and ``ranks`` when
  its result has no exact law) the mean over ``draws`` releases with its standard error.

Synthetic rows: Prastakos et al.'s designs (:func:`mipdp.datasets.make_bss_regression`) at
``synth_p``, ``synth_s``, ``synth_eps``; ``P(release = truth)`` of ``public`` (the
known bounds ``(0.5, 0.5)``), ``ranks`` and ``kendall``, exact, mean over trials.

A method that is not in this mipdp (``ranks`` when ``private_bss`` rejects
``bounds="ranks"``, ``noisy_iht`` when no comparator has that name) gets a "n/a" cell and
no result file, so a rerun after it is added computes only its cells.  One JSON file per
cell under ``OUT/<name>/cells/``; the tables go to ``OUT/<name>/tables.md``.

Every figure is an evaluation quantity computed from the data without noise: **not
private**.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import logging
import math
import os
import time
import warnings
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = ["RealConfig", "run_real_study", "best_subset", "kendall_law", "REAL_METHODS",
           "SYNTH_METHODS", "MethodUnavailable", "load_real_config"]

logger = logging.getLogger(__name__)

REAL_METHODS = ("public", "ranks", "private", "kendall", "dp_sis", "noisy_iht")
SYNTH_METHODS = ("public", "ranks", "kendall")
METHOD_TITLES = {"public": "public ranges", "ranks": "ranks", "private": "private ranges",
                 "kendall": "DPKendall", "dp_sis": "DP-SIS", "noisy_iht": "noisy IHT"}
#: synthetic designs: name -> (design, rho) of make_bss_regression
DESIGNS = {"seed002_rho0.1": ("seed002", 0.1), "seed002_rho0.7": ("seed002", 0.7),
           "cancel": ("cancel", 0.7)}


class MethodUnavailable(RuntimeError):
    """The method is not in this mipdp (yet)."""


@dataclass
class RealConfig:
    """The benchmark's grid (the ``[study]`` table of a ``kind = "real"`` config)."""

    name: str = "real_data"
    kind: str = "real"
    sets: list = field(default_factory=lambda: ["CPS1985", "DoctorVisits", "NMES1988",
                                                "Workinghours", "College", "Housing",
                                                "Boston", "CASchools", "SwissLabor", "HMDA"])
    s: list = field(default_factory=lambda: [3, 5])
    eps: list = field(default_factory=lambda: [1.0, 5.0])
    methods: list = field(default_factory=lambda: list(REAL_METHODS))
    draws: int = 1000            # Monte Carlo releases per cell (DP-SIS, noisy IHT, ...)
    range_draws: int = 10        # releases of the private ranges
    synth_designs: list = field(default_factory=lambda: list(DESIGNS))
    synth_methods: list = field(default_factory=lambda: list(SYNTH_METHODS))
    synth_p: int = 20
    synth_s: int = 5
    synth_eps: float = 1.0
    synth_ns: list = field(default_factory=lambda: [500, 1000, 2000, 4000])
    synth_trials: int = 3
    seed: int = 0

    def __post_init__(self) -> None:
        from .real_sets import REAL_SETS
        if self.kind != "real":
            raise ValueError(f"kind: a real-data config has kind 'real', got {self.kind!r}")
        for name, known in (("sets", sorted(REAL_SETS)), ("methods", list(REAL_METHODS)),
                            ("synth_methods", list(SYNTH_METHODS)),
                            ("synth_designs", list(DESIGNS))):
            bad = [v for v in getattr(self, name) if v not in known]
            if bad:
                raise ValueError(f"{name}: unknown {bad}; known: {known}")
        for f in ("draws", "range_draws", "synth_p", "synth_s", "synth_trials"):
            if int(getattr(self, f)) < 1:
                raise ValueError(f"{f}: must be >= 1")
        self.s = [int(v) for v in self.s]
        self.eps = [float(v) for v in self.eps]
        self.synth_ns = [int(v) for v in self.synth_ns]

    def fingerprint(self) -> dict:
        return {k: getattr(self, k) for k in ("draws", "range_draws", "synth_p", "synth_s",
                                              "synth_eps", "seed")}


def load_real_config(study: dict) -> RealConfig:
    names = {f.name for f in dataclasses.fields(RealConfig)}
    extra = set(study) - names
    if extra:
        raise ValueError(f"unknown [study] keys of a real-data config {sorted(extra)}; "
                         f"known: {sorted(names)}")
    return RealConfig(**study)


# ------------------------------------------------------------------ targets
def _standardise(X):
    sd = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)


def _hinge_value(Z: np.ndarray, y: np.ndarray) -> float:
    """``min_{β, b} Σ max(0, 1 − y(b + Zβ))``, exact, by linear programming.

    Solved as its LP dual (about 5× faster at n = 2380): ``max Σ α_i`` subject to
    ``Σ α_i y_i z_i = 0``, ``Σ α_i y_i = 0``, ``0 ≤ α ≤ 1``; the primal is feasible and
    bounded below, so the two optimal values are equal (strong duality).
    """
    from scipy.optimize import linprog
    A_eq = np.vstack([(y[:, None] * Z).T, y[None, :]])
    res = linprog(-np.ones(len(y)), A_eq=A_eq, b_eq=np.zeros(A_eq.shape[0]), bounds=(0, 1),
                  method="highs")
    if res.status != 0:      # pragma: no cover - the dual is feasible (α = 0) and bounded
        raise RuntimeError(f"hinge LP failed: {res.message}")
    return float(-res.fun)


def _l2svm_value(Z: np.ndarray, y: np.ndarray, lam: float = 1.0) -> float:
    """``min_{β, b} Σ max(0, 1 − y(b + Zβ))² + (λ/2)‖β‖²`` (L2-regularised L2-loss SVM).

    Smooth and strictly convex in ``β`` (the intercept ``b`` unpenalised): L-BFGS with an
    exact gradient to ``gtol = 1e-10``.
    """
    from scipy.optimize import minimize
    n, k = Z.shape

    def fun(t):
        a = np.maximum(1.0 - y * (t[0] + Z @ t[1:]), 0.0)
        g = -2.0 * a * y
        return a @ a + 0.5 * lam * t[1:] @ t[1:], np.r_[g.sum(), Z.T @ g + lam * t[1:]]

    res = minimize(fun, np.zeros(k + 1), jac=True, method="L-BFGS-B",
                   options={"gtol": 1e-10, "ftol": 1e-15, "maxiter": 10_000})
    return float(res.fun)


#: how a classification target is defined: the L2-regularised L2-loss SVM (unique on the
#: benchmark's sets), or the plain hinge (exact LP; its best subset ties on them)
CLASS_TARGETS = ("l2svm", "hinge")


def best_subset(X, y, s: int, task: str = "regression", class_target: str = "l2svm"):
    """``(S*, values)``: the exhaustive best subset and every support's value.

    Regression: residual sum of squares of OLS with an intercept.  Classification (``±1``
    labels): ``class_target="l2svm"``, the L2-regularised linear SVM with the squared hinge
    (scikit-learn's ``LinearSVC`` default loss), ``Σ max(0, 1 − y_i(b + x_iᵀβ))² + ½‖β‖²``
    with an unpenalised intercept; ``"hinge"``, the plain total hinge loss with an
    intercept (an exact linear program per support; its minimum is often attained by many
    supports, as a vertex of the LP leaves features at zero).  Columns standardised.
    """
    if class_target not in CLASS_TARGETS:
        raise ValueError(f"class_target: one of {list(CLASS_TARGETS)}, got {class_target!r}")
    Z = _standardise(np.asarray(X, dtype=float))
    supports = np.array(list(itertools.combinations(range(Z.shape[1]), int(s))), dtype=np.intp)
    vals = np.empty(len(supports))
    if task == "regression":
        yc = y - y.mean()
        for i, S in enumerate(supports):
            A = Z[:, S]
            coef, *_ = np.linalg.lstsq(A, yc, rcond=None)
            r = yc - A @ coef
            vals[i] = r @ r
    else:
        value = _l2svm_value if class_target == "l2svm" else _hinge_value
        y = np.asarray(y, dtype=float)
        for i, S in enumerate(supports):
            vals[i] = value(Z[:, S], y)
    return supports[int(np.argmin(vals))], vals


# ------------------------------------------------------------------ laws
def kendall_law(X, y, k: int, eps: float,
                neighbour: str = "replace_one") -> tuple[np.ndarray, np.ndarray]:
    """Exact law of :func:`mipdp.comparators.dp_kendall`: ``(supports, probabilities)``.

    The same sequential softmax as
    :func:`~mipdp.comparators.kendall.dp_kendall_distribution`, summed by a dynamic
    programme over the *sets* chosen after each round (a round's scores depend on the set
    chosen so far, not on its order), so it runs at any ``p`` with ``C(p, ≤ k)`` small.
    """
    from scipy.special import logsumexp

    from ..comparators.kendall import kendall_sensitivities, scaled_kendall
    X = np.asarray(X, dtype=float)
    p = X.shape[1]
    s1, s2 = kendall_sensitivities(neighbour)
    tau_y = np.abs(scaled_kendall(X, y))
    tau_xx = np.abs(np.column_stack([scaled_kendall(X, X[:, j]) for j in range(p)]))
    layer = {(): 0.0}
    for rnd in range(k):
        nxt: dict = {}
        for A, lp in layer.items():
            if rnd == 0:
                score, sens = tau_y, s1
            else:
                score, sens = tau_y - tau_xx[:, list(A)].sum(axis=1) / rnd, s2
            w = score * eps / (2.0 * sens * k)
            avail = np.ones(p, dtype=bool)
            avail[list(A)] = False
            step = w - logsumexp(w[avail])
            for j in np.flatnonzero(avail):
                B = tuple(sorted(A + (int(j),)))
                v = lp + step[j]
                nxt[B] = np.logaddexp(nxt[B], v) if B in nxt else v
        layer = nxt
    supports = np.array(sorted(layer), dtype=np.intp)
    logp = np.array([layer[tuple(S)] for S in supports])
    return supports, np.exp(logp - logsumexp(logp))


def _all_supports(p: int, s: int) -> np.ndarray:
    return np.array(list(itertools.combinations(range(p), s)), dtype=np.intp)


def _em_law(res, p: int, s: int) -> tuple[np.ndarray, np.ndarray]:
    """The exponential mechanism's exact law from its result (``ValueError`` if unknown)."""
    from scipy.special import logsumexp
    sup = _all_supports(p, s)
    lp = np.array([res.log_probability(S) for S in sup])
    return sup, np.exp(lp - logsumexp(lp))


def _overlap(supports, target, s: int) -> np.ndarray:
    return np.isin(np.asarray(supports), np.asarray(target)).sum(axis=1) / s


def _summary_law(supports, probs, target, s):
    ov = _overlap(supports, target, s)
    hit = np.all(np.sort(supports, axis=1) == np.sort(target), axis=1)
    return {"overlap": float(probs @ ov), "overlap_se": 0.0, "p_target": float(probs[hit].sum()),
            "how": "exact"}


def _summary_draws(draws, target, s, how="draws"):
    draws = np.sort(np.asarray(draws), axis=1)
    ov = _overlap(draws, target, s)
    hit = np.all(draws == np.sort(target), axis=1)
    m = len(ov)
    return {"overlap": float(ov.mean()), "overlap_se": float(ov.std(ddof=1) / math.sqrt(m)),
            "p_target": float(hit.mean()), "how": f"{how} ({m})"}


# ------------------------------------------------------------------ methods
def _quiet():
    w = warnings.catch_warnings()
    w.__enter__()
    warnings.simplefilter("ignore")
    return w


def _loss_of(task):
    return ("least_squares", (0.5, 0.5)) if task == "regression" else ("hinge", (0.5, None))


def _ranks_result(X, y, s, eps, loss, rng, n_draws=1):
    from ..exceptions import InvalidParameterError
    from ..selection import private_bss
    try:
        return private_bss(X, y, s, eps, bounds="ranks", loss=loss, random_state=rng,
                           n_draws=n_draws)
    except (InvalidParameterError, ValueError, TypeError) as exc:
        if "ranks" in str(exc) or isinstance(exc, InvalidParameterError):
            raise MethodUnavailable(
                f"private_bss(bounds='ranks') is not available: {exc}") from exc
        raise


def _noisy_iht(name="noisy_iht"):
    from ..comparators.registry import get_method
    try:
        return get_method(name)
    except ValueError as exc:
        raise MethodUnavailable(f"comparator {name!r} is not registered") from exc


def run_real_method(data, method: str, s: int, eps: float, target, cfg: RealConfig, rng):
    """One cell: the law (or draws) of ``method`` on ``data``, summarised against ``target``."""
    from ..selection import private_bss
    loss, bounds = _loss_of(data.task)
    Xu, yu = data.mapped()
    p = Xu.shape[1]
    w = _quiet()
    try:
        if method == "public":
            res = private_bss(Xu, yu, s, eps, bounds=bounds, loss=loss, random_state=rng)
            return _summary_law(*_em_law(res, p, s), target, s)
        if method == "ranks":
            res = _ranks_result(data.X, data.y, s, eps, loss, rng)
            try:
                return _summary_law(*_em_law(res, p, s), target, s)
            except ValueError:
                res = _ranks_result(data.X, data.y, s, eps, loss, rng, n_draws=cfg.draws)
                return _summary_draws(res.supports, target, s)
        if method == "private":
            rows = []
            for r in rng.spawn(cfg.range_draws):
                res = private_bss(data.X, data.y, s, eps, bounds="private", loss=loss,
                                  random_state=r)
                rows.append(_summary_law(*_em_law(res, p, s), target, s))
            ov = np.array([r["overlap"] for r in rows])
            return {"overlap": float(ov.mean()),
                    "overlap_se": float(ov.std(ddof=1) / math.sqrt(len(ov))),
                    "p_target": float(np.mean([r["p_target"] for r in rows])),
                    "how": f"exact given ranges, {len(ov)} range releases"}
        if method == "kendall":
            return _summary_law(*kendall_law(data.X, data.y, s, eps), target, s)
        if method == "dp_sis":
            from ..comparators import dp_sis
            b = (0.5, 0.5) if loss == "least_squares" else (0.5, 1.0)
            res = dp_sis(Xu, yu, s, eps, bounds=b, random_state=rng, n_draws=cfg.draws)
            return _summary_draws(res.supports, target, s)
        if method == "noisy_iht":
            import inspect
            fn = _noisy_iht()
            kw = {}
            if "bounds" in inspect.signature(fn).parameters:
                kw["bounds"] = (0.5, 0.5) if loss == "least_squares" else (0.5, 1.0)
            res = fn(Xu, yu, s, eps, random_state=rng, n_draws=cfg.draws, **kw)
            return _summary_draws(res.supports, target, s)
    finally:
        w.__exit__(None, None, None)
    raise ValueError(f"method: unknown {method!r}")


def run_synth_method(X, y, truth, method: str, s: int, eps: float, rng) -> float:
    """Exact ``P(release = truth)`` of ``method`` on synthetic data."""
    from ..selection import private_bss
    X.shape[1]
    truth = np.sort(np.asarray(truth))
    w = _quiet()
    try:
        if method == "public":
            res = private_bss(X, y, s, eps, bounds=(0.5, 0.5), random_state=rng)
            return float(res.probability(truth))
        if method == "ranks":
            res = _ranks_result(X, y, s, eps, "least_squares", rng)
            return float(res.probability(truth))
        if method == "kendall":
            sup, pr = kendall_law(X, y, s, eps)
            return float(pr[np.all(sup == truth, axis=1)].sum())
    finally:
        w.__exit__(None, None, None)
    raise ValueError(f"synth method: unknown {method!r}")


# ------------------------------------------------------------------ the study
def _seed(cfg, *key):
    parts = [zlib.crc32(str(k).encode()) for k in key]
    return np.random.default_rng(np.random.SeedSequence(cfg.seed, spawn_key=tuple(parts)))


def _write(path: Path, record: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    tmp.write_text(json.dumps(record))
    os.replace(tmp, path)


def _real_cell(cfg, name, s, eps, method, root):
    from .real_sets import load_real_set
    data = load_real_set(name)
    target = _target(data, s, root)
    t0 = time.perf_counter()
    try:
        out = run_real_method(data, method, s, eps, target, cfg,
                              _seed(cfg, name, s, eps, method))
    except MethodUnavailable as exc:
        return {"available": False, "note": str(exc)}
    out.update(available=True, time_s=time.perf_counter() - t0)
    return out


def _synth_cell(cfg, design, n, trial, method):
    from ..datasets import make_bss_regression
    des, rho = DESIGNS[design]
    X, y, truth = make_bss_regression(n=n, p=cfg.synth_p, s=cfg.synth_s, rho=rho, design=des,
                                      random_state=_seed(cfg, design, n, trial, "data"))
    t0 = time.perf_counter()
    try:
        pt = run_synth_method(X, y, truth, method, cfg.synth_s, cfg.synth_eps,
                              _seed(cfg, design, n, trial, method))
    except MethodUnavailable as exc:
        return {"available": False, "note": str(exc)}
    return {"available": True, "p_truth": pt, "time_s": time.perf_counter() - t0}


def _target(data, s, root: Path):
    f = root / "targets" / f"{data.name}_s{s}.json"
    if f.exists():
        return np.array(json.loads(f.read_text())["target"])
    t0 = time.perf_counter()
    S, vals = best_subset(data.X, data.y, s, data.task)
    second = np.partition(vals, 1)[1] if len(vals) > 1 else np.nan
    _write(f, {"target": S.tolist(), "value": float(vals.min()), "second": float(second),
               "time_s": time.perf_counter() - t0})
    return S


def _run(job):
    kind, cfg, key, root = job
    if kind == "real":
        return job, _real_cell(cfg, *key, root)
    return job, _synth_cell(cfg, *key)


def _path(root, kind, key):
    if kind == "real":
        name, s, eps, method = key
        return root / "cells" / "real" / f"{name}_s{s}_eps{eps:g}_{method}.json"
    design, n, trial, method = key
    return root / "cells" / "synth" / f"{design}_n{n}_t{trial}_{method}.json"


def run_real_study(cfg: RealConfig, out, *, jobs: int = 1, progress: bool = False) -> dict:
    """Run every missing cell, then write ``OUT/<name>/tables.md``; returns a report."""
    from joblib import Parallel, delayed
    t0 = time.perf_counter()
    root = Path(out) / cfg.name
    root.mkdir(parents=True, exist_ok=True)
    fp = root / "study.json"
    if fp.exists():
        old = json.loads(fp.read_text())
        diff = {k: (old.get(k), v) for k, v in cfg.fingerprint().items() if old.get(k) != v}
        if diff:
            raise ValueError(f"{root} holds a real-data study with different parameters "
                             f"{diff} (old, new); choose another --out or --name")
    fp.write_text(json.dumps(dataclasses.asdict(cfg), indent=2))
    from .real_sets import load_real_set
    for name in cfg.sets:                    # targets first (shared by the cells)
        for s in cfg.s:
            if s < load_real_set(name).X.shape[1]:
                _target(load_real_set(name), s, root)
    jobs_ = []
    for name in cfg.sets:
        p = load_real_set(name).X.shape[1]
        for s in cfg.s:
            if s >= p:
                continue
            for eps in cfg.eps:
                for m in cfg.methods:
                    jobs_.append(("real", (name, s, eps, m)))
    for d in cfg.synth_designs:
        for n in cfg.synth_ns:
            for t in range(cfg.synth_trials):
                for m in cfg.synth_methods:
                    jobs_.append(("synth", (d, n, t, m)))
    todo = [(k, cfg, key, root) for k, key in jobs_ if not _path(root, k, key).exists()]
    computed, unavailable = 0, {}
    results = {}
    par = Parallel(n_jobs=jobs, return_as="generator_unordered")
    bar = None
    if progress and todo:
        try:                               # tqdm is optional (the experiments extra has it)
            from tqdm.auto import tqdm
            bar = tqdm(total=len(todo), desc=cfg.name, unit="cell")
        except ImportError:
            logger.info("%s: %d cells to compute", cfg.name, len(todo))
    try:
        for (kind, _, key, _), rec in par(delayed(_run)(j) for j in todo):
            if rec["available"]:
                _write(_path(root, kind, key), rec)
                computed += 1
            else:
                unavailable[key[-1]] = rec["note"]
                results[(kind, key)] = rec
            logger.info("%s %s: %s", kind, key, rec.get("overlap", rec.get("p_truth", "n/a")))
            if bar is not None:
                bar.set_postfix_str(" ".join(map(str, key)))
                bar.update()
    finally:
        if bar is not None:
            bar.close()
    for kind, key in jobs_:
        f = _path(root, kind, key)
        if f.exists():
            results[(kind, key)] = json.loads(f.read_text())
    wall = time.perf_counter() - t0
    tables = render_tables(cfg, root, results, wall)
    (root / "tables.md").write_text(tables)
    return {"root": root, "computed": computed, "skipped": len(jobs_) - len(todo),
            "unavailable": unavailable, "wall_time_s": wall, "tables": tables}


# ------------------------------------------------------------------ tables
def _cell_text(rec):
    if rec is None or not rec.get("available", False):
        return "n/a"
    if rec.get("how") == "exact":
        return f"{rec['overlap']:.3f}"
    return f"{rec['overlap']:.3f} ± {rec['overlap_se']:.3f}"


def render_tables(cfg: RealConfig, root: Path, results: dict, wall: float) -> str:
    """The markdown tables: data sets, one table per (s, ε), and the synthetic rows."""
    from .real_sets import describe_set, load_real_set
    cell_s = sum(r.get("time_s", 0.0) for r in results.values() if r.get("available"))
    target_s = sum(json.loads(f.read_text()).get("time_s", 0.0)
                   for f in (root / "targets").glob("*.json"))
    lines = [f"<!-- written by `mipdp experiment run` ({cfg.name}): last run {wall:.0f} s wall; "
             f"the cells' own times sum to {cell_s:.0f} s, the targets' to {target_s:.0f} s "
             "-->", "",
             "| data | source | task | n | p | target | skewness of y | ranges (columns; y) "
             "| cleaning |", "|---|---|---|---|---|---|---|---|---|"]
    datas = {name: load_real_set(name) for name in cfg.sets}
    for name, d in datas.items():
        r = describe_set(d)
        sk = (f"{r['skew_y']:.2f}" if d.task == "regression"
              else f"(+1 rate {r['positive_rate']:.2f})")
        lines.append(f"| {name} | {r['source']} | {d.task} | {r['n']} | {r['p']} | "
                     f"{r['target']}: {r['what']} | {sk} | {r['ranges']} | {r['cleaning']} |")
    for s in cfg.s:
        for eps in cfg.eps:
            lines += ["", f"**s = {s}, ε = {eps:g}** — expected overlap E|S ∩ S*|/s "
                      "(± standard error where estimated)", "",
                      "| data | target S* | chance | " +
                      " | ".join(METHOD_TITLES[m] for m in cfg.methods) + " |",
                      "|---|---|---|" + "---|" * len(cfg.methods)]
            for name, d in datas.items():
                p = d.X.shape[1]
                if s >= p:
                    continue
                tf = root / "targets" / f"{name}_s{s}.json"
                tgt = json.loads(tf.read_text())["target"] if tf.exists() else []
                tname = ", ".join(d.columns[i] for i in tgt)
                tag = " (hinge)" if d.task == "classification" else ""
                cells = [_cell_text(results.get(("real", (name, s, eps, m))))
                         for m in cfg.methods]
                lines.append(f"| {name}{tag} | {tname} | {s / p:.3f} | " + " | ".join(cells)
                             + " |")
    if cfg.synth_designs and cfg.synth_methods:
        lines += ["", f"**Synthetic** (make_bss_regression, p = {cfg.synth_p}, "
                  f"s = {cfg.synth_s}, ε = {cfg.synth_eps:g}) — P(release = truth), exact, "
                  f"mean ± standard error over {cfg.synth_trials} data sets", "",
                  "| design | n | " + " | ".join(
                      "known bounds (0.5, 0.5)" if m == "public" else METHOD_TITLES[m]
                      for m in cfg.synth_methods) + " |",
                  "|---|---|" + "---|" * len(cfg.synth_methods)]
        for dsn in cfg.synth_designs:
            for n in cfg.synth_ns:
                cells = []
                for m in cfg.synth_methods:
                    got = [results.get(("synth", (dsn, n, t, m)))
                           for t in range(cfg.synth_trials)]
                    v = [r["p_truth"] for r in got if r and r.get("available")]
                    if len(v) < cfg.synth_trials:
                        cells.append("n/a")
                    else:
                        se = np.std(v, ddof=1) / math.sqrt(len(v)) if len(v) > 1 else 0.0
                        cells.append(f"{np.mean(v):.3f} ± {se:.3f}")
                lines.append(f"| {dsn} | {n} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
