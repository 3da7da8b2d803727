"""Sweeps over ``methods × n × trials`` with one result file per cell, resumable.

Layout of a study directory ``OUT/<name>/``::

    study.json                  the StudyConfig (its fingerprint guards resumption)
    trials/<method>/n<n>_t<trial>.json   one cell: every draw and its metrics
    draws.csv, draws.parquet    tidy table, one row per draw (parquet if pyarrow)
    summary.csv                 per (method, n): mean and standard error over trials

**Resume.**  A cell is computed only if its file is missing; files are written
atomically (temporary file, then :func:`os.replace`) by the main process as soon as the
cell's result arrives, so an interrupted sweep restarts where it stopped and a finished
one is not recomputed.

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
import json
import logging
import os
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .config import StudyConfig
from .methods import get_adapter, supports_loss

__all__ = ["run_study", "run_cell", "cell_seeds", "load_table", "summarize", "StudyReport",
           "LossUnavailable", "study_dir"]

logger = logging.getLogger(__name__)


class LossUnavailable(RuntimeError):
    """The study's loss is not in :data:`mipdp.losses.LOSSES` (yet)."""


def study_dir(config: StudyConfig, out) -> Path:
    return Path(out) / config.name


def cell_seeds(seed: int, n: int, trial: int, method: str):
    """``(data_seed, method_seed)`` SeedSequences of one cell (see the module docstring)."""
    data = np.random.SeedSequence(seed, spawn_key=(int(n), int(trial), 0))
    meth = np.random.SeedSequence(seed, spawn_key=(int(n), int(trial), 1,
                                                   zlib.crc32(method.encode())))
    return data, meth


def _cell_path(root: Path, method: str, n: int, trial: int) -> Path:
    return root / "trials" / method / f"n{n}_t{trial}.json"


def _make_data(config: StudyConfig, n: int, data_seed):
    from ..datasets import make_bss_classification, make_bss_regression
    rng = np.random.default_rng(data_seed)
    from ..losses import get_loss
    # regression losses (which bound |y|) get seed 002's regression design, label losses
    # (hinge) its classification design
    regression = get_loss(config.loss).needs_y_bound
    make = make_bss_regression if regression else make_bss_classification
    X, y, truth = make(n=n, p=config.p, s=config.s, rho=config.rho, snr=config.snr,
                       random_state=rng)
    if config.kind == "utility":
        perm = rng.permutation(n)
        n_test = int(round(config.test_fraction * n))
        test, train = perm[:n_test], perm[n_test:]
        return X[train], y[train], X[test], y[test], truth
    return X, y, None, None, truth


def run_cell(config: StudyConfig, method: str, n: int, trial: int) -> dict:
    """Run one ``(method, n, trial)`` cell and return its record (JSON-serialisable).

    The released supports (``rows["support"]``) are the methods' private outputs; every
    metric next to them — ``exact``, ``f1``, ``utility_loss``, ``test_mse``,
    ``meta["best_support"]``, ``meta["optimum_is_truth"]`` — is computed from the data and
    the true support without noise and is **not private**: research output about the
    methods, not a release.
    """
    from .coefficients import private_coefficients, split_budget
    from .metrics import SupportLoss, exact_recovery, support_f1, test_mse
    data_seed, meth_seed = cell_seeds(config.seed, n, trial, method)
    X, y, Xt, yt, truth = _make_data(config, n, data_seed)
    rng_method, rng_fit = np.random.default_rng(meth_seed).spawn(2)
    if config.kind == "utility":
        eps_select, eps_fit = split_budget(config.eps, config.select_fraction)
    else:
        eps_select, eps_fit = config.eps, None
    bounds = (config.b_x, config.b_y)
    out = get_adapter(method)(X, y, config.s, eps_select, rng_method, config.draws,
                              loss=config.loss, bounds=bounds, ridge=config.ridge,
                              radius=config.radius)
    t_metrics = time.perf_counter()
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
    meta = {"method": method, "n": n, "trial": trial, "time_s": out.time_s,
            "epsilon_select": out.epsilon, "delta": out.delta, "guarantee": out.guarantee,
            "truth": np.asarray(truth).tolist(), "best_support": best_S.tolist(),
            "optimum_is_truth": bool(np.array_equal(best_S, np.sort(truth)))}
    if config.kind == "utility":
        fit_rngs = rng_fit.spawn(supports.shape[0])
        mse, mse_raw = [], []
        Xt_c = np.clip(Xt, -config.b_x, config.b_x)
        yt_c = np.clip(yt, -config.b_y, config.b_y)
        guarantee_fit = None
        for S, r in zip(supports, fit_rngs):
            fit = private_coefficients(X, y, S, eps_fit, bounds=bounds, ridge=config.ridge,
                                       radius=config.radius, random_state=r)
            mse.append(test_mse(Xt_c, yt_c, S, fit.coef))
            mse_raw.append(test_mse(Xt_c, yt, S, fit.coef))
            guarantee_fit = fit.guarantee
        rows["test_mse"] = mse
        rows["test_mse_raw_y"] = mse_raw
        meta["epsilon_fit"] = eps_fit
        meta["guarantee_fit"] = guarantee_fit
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
        old = json.loads(f.read_text())
        new = json.loads(json.dumps(config.fingerprint()))
        diff = {k: (old.get(k), v) for k, v in new.items() if old.get(k) != v}
        if diff:
            raise ValueError(f"{root} holds a study with different parameters {diff} "
                             "(old, new); choose another --out or --name")
    root.mkdir(parents=True, exist_ok=True)
    (root / "study.json").write_text(json.dumps(config.to_dict(), indent=2))


@dataclass
class StudyReport:
    """What :func:`run_study` did."""

    root: Path
    computed: list
    skipped: list
    table: object  # pandas.DataFrame of every draw
    summary: object
    wall_time_s: float
    messages: list


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
    todo = [c for c in cells if not _cell_path(root, *c).exists()]
    todo_set = set(todo)
    skipped = [c for c in cells if c not in todo_set]
    computed = []
    if todo:
        # slowest cells first (larger n) to balance the workers
        todo.sort(key=lambda c: (-c[1], c[2], c[0]))
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
    return StudyReport(root, computed, skipped, table, summary, time.perf_counter() - t0,
                       messages)


def _run_cell_keyed(config, method, n, trial):
    return (method, n, trial), run_cell(config, method, n, trial)


def load_table(root, cells=None):
    """Tidy :class:`pandas.DataFrame`, one row per draw, of the cells present under ``root``."""
    import pandas as pd
    root = Path(root)
    if cells is None:
        paths = sorted((root / "trials").glob("*/n*_t*.json"))
    else:
        paths = [_cell_path(root, *c) for c in cells]
    frames = []
    for path in paths:
        if not path.exists():
            continue
        rec = json.loads(path.read_text())
        meta, rows = rec["meta"], rec["rows"]
        df = pd.DataFrame(rows)
        for k in ("method", "n", "trial", "time_s", "epsilon_select", "optimum_is_truth"):
            df.insert(0 if k in ("method", "n", "trial") else len(df.columns), k, meta[k])
        frames.append(df)
    if not frames:
        return pd.DataFrame(columns=["method", "n", "trial", "draw"])
    df = pd.concat(frames, ignore_index=True)
    cols = ["method", "n", "trial"] + [c for c in df.columns if c not in ("method", "n", "trial")]
    return df[cols].sort_values(["method", "n", "trial", "draw"], kind="stable") \
        .reset_index(drop=True)


METRICS = ("exact", "f1", "utility_loss", "test_mse", "test_mse_raw_y", "time_s")


def summarize(table):
    """Per ``(method, n)``: mean over trials of the per-trial means, and its standard error."""
    import pandas as pd
    if table.empty:
        return pd.DataFrame()
    metrics = [m for m in METRICS if m in table.columns]
    per_trial = table.groupby(["method", "n", "trial"])[metrics].mean()
    g = per_trial.groupby(level=["method", "n"])
    mean = g.mean().add_suffix("_mean")
    se = (g.std(ddof=1) / np.sqrt(g.count())).fillna(0.0).add_suffix("_se")
    out = pd.concat([mean, se], axis=1)
    out["trials"] = g.size()
    order = [c for m in metrics for c in (f"{m}_mean", f"{m}_se")] + ["trials"]
    return out[order].reset_index()


def _save_tables(root: Path, table, summary) -> None:
    table.to_csv(root / "draws.csv", index=False)
    summary.to_csv(root / "summary.csv", index=False)
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return
    table.to_parquet(root / "draws.parquet", index=False)
