"""Sweeps over ``methods × n × trials`` with one result file per cell, resumable.

Layout of a study directory ``OUT/<name>/``::

    study.json                  the StudyConfig (its fingerprint guards resumption)
    trials/<method>/n<n>_t<trial>.json   one cell: every draw and its metrics
    trials/_em_reference/n<n>_t<trial>.json   the exponential mechanism's certified
                                P(truth) on that data set (MIP studies)
    draws.csv, draws.parquet    tidy table, one row per draw (parquet if pyarrow)
    summary.csv                 per (method, n): mean and standard error over trials

**Resume.**  A cell is computed only if its file is missing; files are written
atomically (temporary file, then :func:`os.replace`) by the main process as soon as the
cell's result arrives, so an interrupted sweep restarts where it stopped and a finished
one is not recomputed.  A cell stopped by ``time_limit`` is recorded as not finished and
rerun only when the study's ``time_limit`` is larger than the one it ran with.

**Randomness.**  No global RNG.  A cell's data come from
``SeedSequence(seed, spawn_key=(n, trial, 0))`` and its method's randomness from
``SeedSequence(seed, spawn_key=(n, trial, 1, crc32(method)))`` — the children that
``SeedSequence(seed).spawn`` produces at those positions of its spawn tree, addressed by key
instead of by position, so they do not depend on which cells run, in which order, or
on how many workers.  Every method sees the same data for a given ``(n, trial)``.

**Parallelism.**  :class:`joblib.Parallel` (``jobs``); ``backend="dask"`` runs the same
cells on a Dask cluster through joblib's dask backend (``scheduler`` is the address;
without one a local cluster is started).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .config import StudyConfig
from .methods import BSS_METHODS, get_adapter, supports_loss

__all__ = ["run_study", "run_cell", "cell_seeds", "load_table", "summarize", "StudyReport",
           "LossUnavailable", "study_dir"]

logger = logging.getLogger(__name__)


class LossUnavailable(RuntimeError):
    """The study's loss is not in :data:`mipdp.losses.LOSSES` (yet)."""


def study_dir(config: StudyConfig, out) -> Path:
    assert config.name is not None  # set by StudyConfig.__post_init__
    return Path(out) / config.name


def cell_seeds(seed: int, n: int, trial: int, method: str):
    """``(data_seed, method_seed)`` SeedSequences of one cell (see the module docstring)."""
    data = np.random.SeedSequence(seed, spawn_key=(int(n), int(trial), 0))
    meth = np.random.SeedSequence(seed, spawn_key=(int(n), int(trial), 1,
                                                   zlib.crc32(method.encode())))
    return data, meth


#: pseudo-method of the cells that compute the exponential mechanism's own P(truth)
REFERENCE = "_em_reference"


def _cell_path(root: Path, method: str, n: int, trial: int) -> Path:
    return root / "trials" / method / f"n{n}_t{trial}.json"


def _needs_run(config: StudyConfig, path: Path) -> bool:
    """Missing, or stopped by a time limit smaller than the study's."""
    if not path.exists():
        return True
    try:
        meta = json.loads(path.read_text())["meta"]
    except (ValueError, KeyError):
        return True                       # unreadable (should not happen: atomic writes)
    if meta.get("finished", True):
        return False
    if meta.get("error_kind", "time_limit") != "time_limit":
        return True                       # a failed certificate, not the clock: try again
    old = meta.get("time_limit")
    return config.time_limit is None or (old is not None and config.time_limit > old)


def _make_data(config: StudyConfig, n: int, data_seed):
    from ..datasets import make_bss_classification, make_bss_regression
    rng = np.random.default_rng(data_seed)
    from ..losses import get_loss
    # regression losses (which bound |y|) get Prastakos et al.'s regression design, label losses
    # (hinge) its classification design
    regression = get_loss(config.loss).needs_y_bound
    make = make_bss_regression if regression else make_bss_classification
    assert config.rho is not None  # set by StudyConfig.__post_init__
    X, y, truth = make(n=n, p=config.p, s=config.s, rho=config.rho, snr=config.snr,
                       design=config.design, random_state=rng)
    if config.kind == "utility":
        perm = rng.permutation(n)
        n_test = int(round(config.test_fraction * n))
        test, train = perm[:n_test], perm[n_test:]
        return X[train], y[train], X[test], y[test], truth
    return X, y, None, None, truth


def run_reference_cell(config: StudyConfig, n: int, trial: int) -> dict:
    """The exponential mechanism's certified ``P(truth)`` on the data of ``(n, trial)``.

    On the rows the selection sees (the training rows of a utility study) with the
    selection's ``ε``.  **Not private** (an evaluation quantity).
    """
    from .em_reference import em_truth_probability
    data_seed, _ = cell_seeds(config.seed, n, trial, REFERENCE)
    X, y, _, _, truth = _make_data(config, n, data_seed)
    eps_select = (config.eps * config.select_fraction if config.kind == "utility"
                  else config.eps)
    ref = em_truth_probability(X, y, truth, eps_select, s=config.s, ball=config.em_ball,
                               loss=config.loss, bounds=(config.b_x, config.b_y),
                               ridge=config.ridge, radius=config.radius)
    meta = {"method": REFERENCE, "n": n, "trial": trial, "finished": True,
            "em_truth_lo": ref["lo"], "em_truth_hi": ref["hi"], "ball": ref["ball"],
            "evaluated": ref["evaluated"], "time_s": ref["time_s"],
            "truth": np.asarray(truth).tolist()}
    return {"meta": meta, "rows": {}}


def run_cell(config: StudyConfig, method: str, n: int, trial: int) -> dict:
    """Run one ``(method, n, trial)`` cell and return its record (JSON-serialisable).

    The released supports (``rows["support"]``) are the methods' private outputs; every
    metric next to them — ``exact``, ``f1``, ``utility_loss``, ``test_mse``,
    ``meta["best_support"]``, ``meta["optimum_is_truth"]``, and for the MIP methods
    ``meta["p_truth_lo"]``/``["p_truth_hi"]`` (the mechanism's exact probability, or
    certified bounds on it, that one draw is the truth) and ``meta["p_truth_freq"]`` (the
    frequency of the truth over ``extra_draws`` further draws of the exponential
    mechanism) — is computed from the data and the true support without noise and is
    **not private**: research output about the methods, not a release.  So are the wall
    times (``time_s``, ``time_metrics_s``, ``time_extra_draws_s``: a timing side channel).
    ``meta["epsilon_select"]`` is the selection's total over all its draws;
    ``meta["epsilon_fit"]`` (utility studies) is per fitted draw.
    """
    if method == REFERENCE:
        return run_reference_cell(config, n, trial)
    from .coefficients import private_coefficients, split_budget
    from .metrics import SupportLoss, exact_recovery, support_f1, test_mse
    data_seed, meth_seed = cell_seeds(config.seed, n, trial, method)
    X, y, Xt, yt, truth = _make_data(config, n, data_seed)
    rng_method, rng_fit, rng_extra = np.random.default_rng(meth_seed).spawn(3)
    if config.kind == "utility":
        eps_select, eps_fit = split_budget(config.eps, config.select_fraction)
    else:
        eps_select, eps_fit = config.eps, None
    bounds = (config.b_x, config.b_y)
    out = get_adapter(method)(X, y, config.s, eps_select, rng_method, config.draws,
                              loss=config.loss, bounds=bounds, ridge=config.ridge,
                              radius=config.radius, time_limit=config.time_limit)
    meta = {"method": method, "n": n, "trial": trial, "time_s": out.time_s,
            "epsilon_select": out.epsilon, "delta": out.delta, "guarantee": out.guarantee,
            "truth": np.asarray(truth).tolist(), "finished": out.finished,
            "time_limit": config.time_limit}
    if not out.finished:
        meta["error"] = out.error
        meta["error_kind"] = out.error_kind
        logger.info("%s n=%d trial=%d: not finished (%s)", method, n, trial, out.error)
        return {"meta": meta, "rows": {}}
    t_metrics = time.perf_counter()
    if out.probability_bounds is not None:
        lo, hi = out.probability_bounds(truth)
        meta["p_truth_lo"], meta["p_truth_hi"] = float(lo), float(hi)
    if method == "exponential" and out.sampler is not None and config.extra_draws:
        t0 = time.perf_counter()
        more = np.sort(np.asarray(out.sampler(rng_extra, int(config.extra_draws))), axis=1)
        meta["p_truth_freq"] = float(exact_recovery(more, truth).mean())
        meta["extra_draws"] = int(config.extra_draws)
        meta["time_extra_draws_s"] = time.perf_counter() - t0
    sl = SupportLoss(X, y, config.s, loss=config.loss, bounds=bounds, ridge=config.ridge,
                     radius=config.radius)
    best_S, best_v = sl.best()
    supports = np.sort(np.asarray(out.supports, dtype=np.intp), axis=1)
    rows = {
        "draw": list(range(supports.shape[0])),
        "support": ["-".join(map(str, S)) for S in supports.tolist()],
        "exact": exact_recovery(supports, truth).astype(int).tolist(),
        "f1": support_f1(supports, truth).tolist(),
        "utility_loss": (sl.values(supports) - best_v).tolist(),
    }
    meta.update({"best_support": best_S.tolist(),
                 "optimum_is_truth": bool(np.array_equal(best_S, np.sort(truth)))})
    if config.kind == "utility":
        fit_rngs = rng_fit.spawn(supports.shape[0])
        mse, mse_raw = [], []
        Xt_c = np.clip(Xt, -config.b_x, config.b_x)
        yt_c = np.clip(yt, -config.b_y, config.b_y)
        guarantee_fit = None
        for S, r in zip(supports, fit_rngs, strict=False):
            fit = private_coefficients(X, y, S, eps_fit, bounds=bounds, ridge=config.ridge,
                                       radius=config.radius, random_state=r)
            mse.append(test_mse(Xt_c, yt_c, S, fit.coef))
            mse_raw.append(test_mse(Xt_c, yt, S, fit.coef))
            guarantee_fit = fit.guarantee
        rows["test_mse"] = mse
        rows["test_mse_raw_y"] = mse_raw
        meta["epsilon_fit"] = eps_fit
        meta["guarantee_fit"] = str(guarantee_fit)
        meta["guarantee_pair"] = (f"per draw, (support, coefficients) is "
                                  f"({eps_select:g} + {eps_fit:g})-DP by basic composition, "
                                  "with the selection's own conditions")
    meta["time_metrics_s"] = time.perf_counter() - t_metrics
    return {"meta": meta, "rows": rows}


def _write_atomic(path: Path, record: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    tmp.write_text(json.dumps(record))
    os.replace(tmp, path)


def _check_study(config: StudyConfig, root: Path) -> None:
    f = root / "study.json"
    if f.exists():
        from .config import FINGERPRINT_DEFAULTS
        old = {**FINGERPRINT_DEFAULTS, **json.loads(f.read_text())}
        new = json.loads(json.dumps(config.fingerprint()))
        diff = {k: (old.get(k), v) for k, v in new.items() if old.get(k) != v}
        if diff:
            raise ValueError(f"{root} holds a study with different parameters {diff} "
                             "(old, new); choose another --out or --name")
    root.mkdir(parents=True, exist_ok=True)
    (root / "study.json").write_text(json.dumps(config.to_dict(), indent=2))


@dataclass
class StudyReport:
    """What :func:`run_study` did (``computed``/``skipped``: method cells only)."""

    root: Path
    computed: list
    skipped: list
    table: object  # pandas.DataFrame of every draw
    summary: object
    wall_time_s: float
    messages: list
    #: reference cells (the exponential mechanism's P(truth)) computed in this run
    references_computed: list = dataclasses.field(default_factory=list)


@contextlib.contextmanager
def _backend(backend: str, scheduler: str | None):
    if backend in (None, "loky", "threading", "sequential"):
        yield None
        return
    if backend != "dask":
        raise ValueError(f"backend: expected 'loky' or 'dask', got {backend!r}")
    import joblib
    from dask.distributed import Client, LocalCluster
    cluster = None
    if scheduler:
        client = Client(scheduler)
    else:
        cluster = LocalCluster(n_workers=1, processes=False)
        client = Client(cluster)
    try:
        with joblib.parallel_config(backend="dask"):
            yield client
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def run_study(config: StudyConfig, out, *, jobs: int = 1, backend: str = "loky",
              scheduler: str | None = None, progress: bool = False) -> StudyReport:
    """Run every missing cell of ``config`` under ``out/<name>/`` and rebuild the tables.

    Raises
    ------
    LossUnavailable
        ``config.loss`` is not registered in :data:`mipdp.losses.LOSSES`.
    """
    from joblib import Parallel, delayed

    from ..losses import LOSSES
    if config.loss not in LOSSES:
        raise LossUnavailable(f"loss {config.loss!r} is not available in this mipdp "
                              f"(mipdp.losses.LOSSES = {sorted(LOSSES)}); study "
                              f"{config.name!r} skipped")
    if config.kind == "utility" and config.loss != "least_squares":
        raise ValueError("kind='utility' needs loss='least_squares' (objective perturbation "
                         "is implemented for the smooth least-squares loss only)")
    t0 = time.perf_counter()
    root = study_dir(config, out)
    _check_study(config, root)
    messages = []
    methods = []
    for m in config.methods:
        if supports_loss(m, config.loss):
            methods.append(m)
        else:
            messages.append(f"method {m!r} skipped: it targets least squares only, not "
                            f"{config.loss!r}")
    cells = [(m, n, t) for n in config.ns for t in range(config.trials) for m in methods]
    if config.em_reference and any(m in BSS_METHODS for m in methods):
        cells += [(REFERENCE, n, t) for n in config.ns for t in range(config.trials)]
    todo = [c for c in cells if _needs_run(config, _cell_path(root, *c))]
    todo_set = set(todo)
    skipped = [c for c in cells if c not in todo_set]
    computed = []
    if todo:
        # trial by trial (an interrupted study has every (method, n) with the same number
        # of trials), and within a trial the slowest cells first (larger n) to balance
        # the workers
        todo.sort(key=lambda c: (c[2], -c[1], c[0]))
        with _backend(backend, scheduler):
            par = Parallel(n_jobs=jobs if backend != "dask" else -1,
                           return_as="generator_unordered")
            gen = par(delayed(_run_cell_keyed)(config, *c) for c in todo)
            bar = None
            if progress:
                try:                       # tqdm is optional (the experiments extra has it)
                    from tqdm.auto import tqdm
                    bar = tqdm(total=len(todo), desc=config.name, unit="cell")
                except ImportError:
                    logger.info("%s: %d cells to compute (install tqdm for a progress bar)",
                                config.name, len(todo))
            try:
                for cell, record in gen:
                    _write_atomic(_cell_path(root, *cell), record)
                    computed.append(cell)
                    if bar is not None:
                        bar.set_postfix_str(f"{cell[0]} n={cell[1]} t={cell[2]}")
                        bar.update()
            finally:
                if bar is not None:
                    bar.close()
    table = load_table(root, cells)
    summary = summarize(table)
    _save_tables(root, table, summary)
    refs = [c for c in computed if c[0] == REFERENCE]
    return StudyReport(root, [c for c in computed if c[0] != REFERENCE],
                       [c for c in skipped if c[0] != REFERENCE], table, summary,
                       time.perf_counter() - t0, messages, refs)


def _run_cell_keyed(config, method, n, trial):
    return (method, n, trial), run_cell(config, method, n, trial)


#: per-trial values read off a cell's meta into every row of the table
_META_COLUMNS = ("time_s", "epsilon_select", "optimum_is_truth", "p_truth_lo", "p_truth_hi",
                 "p_truth_freq")


def load_table(root, cells=None):
    """Tidy :class:`pandas.DataFrame`, one row per draw, of the cells present under ``root``.

    Per-trial figures are repeated on every row of their trial: ``time_s``,
    ``p_truth_lo``/``p_truth_hi`` (the mechanism's exact or certified probability that one
    draw is the truth, MIP methods), ``p_truth_freq`` (frequency of the truth over the
    exponential mechanism's extra draws), ``em_truth_lo``/``em_truth_hi`` (the exponential
    mechanism's own certified ``P(truth)`` on the same data) and ``finished`` (0 for a cell
    stopped by its time limit, which has one row of missing metrics).
    """
    import pandas as pd
    root = Path(root)
    if cells is None:
        paths = sorted(p for p in (root / "trials").glob("*/n*_t*.json")
                       if p.parent.name != REFERENCE)
        ref_paths = sorted((root / "trials" / REFERENCE).glob("n*_t*.json"))
    else:
        paths = [_cell_path(root, *c) for c in cells if c[0] != REFERENCE]
        ref_paths = [_cell_path(root, *c) for c in cells if c[0] == REFERENCE]
    refs = {}
    for path in ref_paths:
        if path.exists():
            m = json.loads(path.read_text())["meta"]
            refs[(m["n"], m["trial"])] = (m["em_truth_lo"], m["em_truth_hi"])
    frames = []
    for path in paths:
        if not path.exists():
            continue
        rec = json.loads(path.read_text())
        meta, rows = rec["meta"], rec["rows"]
        df = pd.DataFrame(rows) if rows else pd.DataFrame({"draw": [np.nan]})
        df.insert(0, "trial", meta["trial"])
        df.insert(0, "n", meta["n"])
        df.insert(0, "method", meta["method"])
        df["finished"] = int(meta.get("finished", True))
        for k in _META_COLUMNS:
            if k in meta:
                df[k] = meta[k]
        ref = refs.get((meta["n"], meta["trial"]))
        if ref is not None:
            df["em_truth_lo"], df["em_truth_hi"] = ref
        frames.append(df)
    if not frames:
        return pd.DataFrame(columns=["method", "n", "trial", "draw"])
    df = pd.concat(frames, ignore_index=True)
    cols = ["method", "n", "trial"] + [c for c in df.columns if c not in ("method", "n", "trial")]
    return df[cols].sort_values(["method", "n", "trial", "draw"], kind="stable") \
        .reset_index(drop=True)


METRICS = ("exact", "f1", "utility_loss", "test_mse", "test_mse_raw_y", "p_truth_lo",
           "p_truth_hi", "p_truth_freq", "em_truth_lo", "em_truth_hi", "time_s")


def summarize(table):
    """Per ``(method, n)``: mean over trials of the per-trial means, and its standard error.

    ``trials`` counts the finished trials the means are over; ``unfinished`` the trials
    stopped by their time limit (they enter no mean).
    """
    import pandas as pd
    if table.empty:
        return pd.DataFrame()
    metrics = [m for m in METRICS if m in table.columns]
    finished = table["finished"] if "finished" in table.columns else pd.Series(1, table.index)
    status = (table.assign(_fin=finished).groupby(["method", "n", "trial"])["_fin"].min()
              .groupby(level=["method", "n"]))
    done = table[finished.astype(bool)]
    per_trial = done.groupby(["method", "n", "trial"])[metrics].mean()
    g = per_trial.groupby(level=["method", "n"])
    mean = g.mean().add_suffix("_mean")
    se = (g.std(ddof=1) / np.sqrt(g.count())).fillna(0.0).add_suffix("_se")
    out = pd.concat([mean, se], axis=1)
    out["trials"] = g.size()
    order = [c for m in metrics for c in (f"{m}_mean", f"{m}_se")] + ["trials"]
    out = out.reindex(status.size().index)[order]
    out["trials"] = out["trials"].fillna(0).astype(int)
    out["unfinished"] = status.apply(lambda s: int((s == 0).sum()))
    return out.reset_index()


def _save_tables(root: Path, table, summary) -> None:
    table.to_csv(root / "draws.csv", index=False)
    summary.to_csv(root / "summary.csv", index=False)
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return
    table.to_parquet(root / "draws.parquet", index=False)
