"""The ``mipdp`` command: demo, select, backends, experiment, plot and audit subcommands."""

from __future__ import annotations

import argparse
import logging
import sys
import warnings

import numpy as np

__all__ = ["main"]


#: loggers of the periodic progress lines (INFO, at most every few seconds, only for long
#: phases); the command line always shows them
PROGRESS_LOGGERS = ("mipdp.enumeration.progress", "mipdp.mechanisms.em_rejection.progress")


#: seconds between two redraws of a progress bar while nothing reports (so its clock moves
#: during a long solve or the sampling phase)
TICK_SECONDS = 0.5


def _progress_bar(desc: str, position: int = 0):
    """``(callback, close)``: a tqdm bar fed by the enumeration's progress events.

    The bar shows the current phase (``warm_start``, ``class_2``, ..., ``sampling``), its
    latest counters and the elapsed time; a background ticker redraws it every
    :data:`TICK_SECONDS` so it never looks frozen while one step runs long (a MIP solve,
    the rejection sampler).  The number of steps of an enumeration is not known in
    advance, so this bar has no total; :func:`_overall_bar` has one.

    tqdm is optional (the ``experiments`` extra has it); without it the callback is
    ``None`` and the periodic INFO lines of :data:`PROGRESS_LOGGERS` are the progress.
    """
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None, lambda: None
    import threading
    bar = tqdm(desc=desc, unit=" steps", leave=False, file=sys.stderr, dynamic_ncols=True,
               position=position, disable=None)  # no bar when stderr is not a terminal
    lock = threading.Lock()
    stop = threading.Event()

    def tick() -> None:
        while not stop.wait(TICK_SECONDS):
            with lock:
                bar.refresh()

    ticker = threading.Thread(target=tick, name="mipdp-progress", daemon=True)
    if not bar.disable:
        ticker.start()

    def callback(event: dict) -> None:
        fields = {k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in event.items()
                  if k not in ("phase", "event", "elapsed")}
        with lock:
            bar.set_description(f"{desc} [{event['phase']}]", refresh=False)
            bar.set_postfix(fields, refresh=False)
            bar.update(1)

    def close() -> None:
        stop.set()
        if ticker.is_alive():
            ticker.join()
        bar.close()

    return callback, close


def _overall_bar(total: int, desc: str):
    """A bar with a known total (one step per method run) and its ETA; ``None`` without
    tqdm or when stderr is not a terminal."""
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm(total=total, desc=desc, unit=" method", file=sys.stderr, dynamic_ncols=True,
                position=0, leave=False, disable=None)


#: plain-words meaning of the demo's diagnostic lines (printed once, at the end)
DEMO_LEGEND = """\
what the lines mean:
  equals truth / truth in k of N draws: whether the released support is the true one.
    Each draw is a separate private release; N draws together spend N times eps.
  P(one draw = truth): the mechanism's exact probability of releasing the truth on this
    data (or certified lower and upper bounds on it).  It is computed from the data, so
    it is not private: a diagnostic for this demo, never something to publish.
  time: seconds per phase of the search that certifies the mechanism's scores (not
    private: the work each phase does depends on the data):
    exhaustive: every support evaluated directly (small problems);
    warm_start / warm_cuts: a first good support and the first linear bounds (cuts);
    optimum: the best support; class_k: the supports that differ from the best one in
    exactly k features (k "mistakes"); top_r: the R best supports; sampling: the draws.
  cuts: linear lower bounds on the objective added to the mixed-integer program.
  no-goods: constraints that exclude supports the search has already listed.
  proposals / accepted: the exponential mechanism is sampled by rejection; a proposal
    is a support drawn from an upper envelope of the weights, accepted with probability
    (weight / envelope).  Few proposals per accepted draw = a tight envelope.
  clipping: the demo clips X and y to |.| <= --bound (0.5) on purpose: seed 002's design
    has standard-normal columns, so most entries are clipped.  Clipping is monotone, so
    the true features still fit y best and are recovered; on your own data choose
    bounds that fit its range (docs/guide.md, section 1)."""


def _demo(args: argparse.Namespace) -> int:
    from .datasets import make_bss_classification, make_bss_regression
    from .exceptions import ClippingWarning, ConditionalPrivacyWarning
    from .selection import private_bss

    make = make_bss_classification if args.loss == "hinge" else make_bss_regression
    X, y, truth = make(n=args.n, p=args.p, s=args.s, random_state=args.seed)
    bounds = (args.bound, None if args.loss == "hinge" else args.bound)
    print(f"seed 002 synthetic data: n={args.n}, p={args.p}, s={args.s}, rho=0.1, SNR=5, "
          f"loss={args.loss}, eps={args.eps}, bounds={bounds}, backend={args.backend}")
    print(f"true support: {truth.tolist()}")
    rows = []
    clipped = None
    overall = _overall_bar(len(args.methods), "demo")
    for i, method in enumerate(args.methods):
        if overall is not None:
            overall.set_description(f"demo [{method}]")
        callback, close = _progress_bar(method, position=1)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConditionalPrivacyWarning)
                warnings.simplefilter("ignore", ClippingWarning)   # explained in the legend
                res = private_bss(X, y, args.s, args.eps, bounds=bounds, loss=args.loss,
                                  ridge=args.ridge, radius=args.radius, method=method,
                                  backend=args.backend, n_draws=args.draws,
                                  random_state=args.seed,
                                  enumeration_options={"progress": callback})
        finally:
            close()
        if overall is not None:
            overall.update(1)
        clipped = res.info.get("clipped_fraction_not_private", clipped)
        n_hits = int(sum(np.array_equal(S, truth) for S in res.supports))
        phases = ", ".join(f"{k} {v:.2f}s" for k, v in res.timings.items())
        lo, hi = res.probability_bounds(truth)
        p_truth = f"{lo:.3f}" if hi - lo <= 5e-4 else f"between {lo:.3f} and {hi:.3f} (certified)"
        rows.append((method, p_truth, res.timings["total"]))
        print(f"\n[{method}] released support: {res.support.tolist()}  "
              f"equals truth: {bool(np.array_equal(res.support, truth))}"
              + (f"  (truth in {n_hits} of {args.draws} draws, {n_hits / args.draws:.0%})"
                 if args.draws > 1 else ""))
        print(f"  P(one draw = truth): {p_truth}  (not private: computed from the data)")
        print(f"  guarantee: {res.guarantee}")
        print(f"  time (not private): {phases}")
        stats = res.stats
        best = ("optimum" if stats.get("optimum_certified") in (None, True)
                else "best support found (not certified optimal)")
        print(f"  not private, for diagnostics: {best} {res.candidates[0].tolist()} "
              f"(gap {stats['optimality_gap']:.1e}), {stats['n_cuts']} cuts, "
              f"{stats['n_nogoods']} no-goods"
              + (f", {stats['sampler']['n_proposals']} proposals for "
                 f"{stats['sampler']['n_accepted']} accepted" if "sampler" in stats else ""))
    if overall is not None:
        overall.close()
    if len(rows) > 1:
        print("\nprobability that one draw releases the true support (not private), wall "
              "time (not private):")
        for method, p_truth, t in rows:
            print(f"  {method:12s} {p_truth:40s} {t:6.2f} s")
    if clipped is not None:
        y_txt = "" if clipped["y"] is None else f" and {clipped['y']:.0%} of y"
        print(f"\nclipped to the bound {args.bound:g}: {clipped['X']:.0%} of X{y_txt} "
              "(not private; see 'clipping' below)")
    print("\n" + DEMO_LEGEND)
    return 0


def _backends(args: argparse.Namespace) -> int:
    from mipdp.solvers import BACKENDS, available_backends
    have = available_backends()
    for name, (_, _, pkg, extra) in BACKENDS.items():
        if name in have:
            print(f"{name:8s} installed  (package {pkg})")
        else:
            print(f"{name:8s} missing    (package {pkg}; install with: pip install \"{extra}\")")
    return 0


def load_design(path: str):
    """``X`` from a file, without densifying or loading it whole.

    ``.npy``: ``np.load(path, mmap_mode="r")``, a read-only :class:`numpy.memmap` (pages are
    read as the products need them); ``.npz``: ``scipy.sparse.load_npz(path)``, a sparse
    matrix saved with ``scipy.sparse.save_npz``.  Both are passed to
    :func:`mipdp.private_bss` as they are (docs/guide.md, "Large, sparse and out-of-core X").

    Raises
    ------
    ValueError
        Another extension, a ``.npz`` archive that is not a scipy sparse matrix, or an
        array that is not 2-D numeric.
    """
    import os
    ext = os.path.splitext(str(path))[1].lower()
    if ext == ".npy":
        try:
            X = np.load(path, mmap_mode="r")
        except ValueError as exc:      # object arrays cannot be memory-mapped
            raise ValueError(f"X: could not memory-map {path} ({exc}); save a numeric array "
                             "with np.save") from None
    elif ext == ".npz":
        import scipy.sparse as sp
        try:
            X = sp.load_npz(path)
        except (ValueError, KeyError, OSError) as exc:
            raise ValueError(f"X: {path} is not a scipy sparse matrix saved with "
                             f"scipy.sparse.save_npz ({exc}); save a dense array with np.save "
                             "(.npy) instead") from None
    else:
        raise ValueError(f"X: expected a .npy file (dense, opened as a memmap), a .npz "
                         f"file (scipy.sparse.save_npz) or a .csv/.parquet table, got {path!r}")
    if X.ndim != 2:
        raise ValueError(f"X: expected a 2-D array in {path}, got shape {X.shape}")
    return X


#: extensions read as a table with a header (:func:`load_table`)
TABLE_EXTENSIONS = (".csv", ".parquet", ".pq")


def is_table(path: str) -> bool:
    """Whether ``path`` names a CSV or Parquet table (by its extension)."""
    import os
    return os.path.splitext(str(path))[1].lower() in TABLE_EXTENSIONS


def load_table(path: str, target: str | None = None, *, split: bool = True):
    """``(X, y)`` from a CSV file with a header or a Parquet file (pandas).

    ``target`` names the target column; by default it is the last column.  ``X`` is the
    DataFrame of the other columns (their names come back as ``result.feature_names``),
    ``y`` a Series.  With ``split=False`` every column is a feature and ``y`` is ``None``
    (the targets come from another file).  Column names are the file's schema (public);
    the values are never shown in a message.

    Raises
    ------
    ValueError
        An unknown target column, a table with fewer than two columns, or a feature
        column that is not numeric (named: convert or drop it first).
    """
    import os
    import pandas as pd
    ext = os.path.splitext(str(path))[1].lower()
    if ext == ".csv":
        df = pd.read_csv(path)
    elif ext in (".parquet", ".pq"):
        df = pd.read_parquet(path)
    else:
        raise ValueError(f"X: expected a .csv or .parquet table, got {path!r}")
    df.columns = [str(c) for c in df.columns]
    y = None
    if split:
        if df.shape[1] < 2:
            raise ValueError(f"X: {path} needs at least two columns (features and the target)")
        if target is None:
            target = df.columns[-1]
        elif target not in df.columns:
            raise ValueError(f"--target: no column {target!r} in {path}; its columns are "
                             f"{list(df.columns)}")
        y = df[target]
        df = df.drop(columns=[target])
    elif target is not None:
        raise ValueError("--target: pass either --target (the target is a column of X) or a "
                         "y file, not both")
    bad = [c for c in df.columns if not pd.api.types.is_numeric_dtype(df[c])
           or pd.api.types.is_bool_dtype(df[c])]
    if bad:
        raise ValueError(f"X: column(s) {bad} of {path} are not numeric; encode them with "
                         "public constants or drop them first")
    return df, y


def load_targets(path: str) -> np.ndarray:
    """``y`` from a ``.npy`` file or a text file (``.csv``: comma-separated; otherwise
    whitespace), as a 1-D float array."""
    import os
    ext = os.path.splitext(str(path))[1].lower()
    if ext == ".npy":
        y = np.load(path)
    elif ext in (".csv", ".txt", ".dat", ""):
        y = np.loadtxt(path, delimiter="," if ext == ".csv" else None, ndmin=1)
    else:
        raise ValueError(f"y: expected a .npy, .csv or .txt file, got {path!r}")
    return np.asarray(y)


def _select(args: argparse.Namespace) -> int:
    """``mipdp select``: a bad file or parameter prints one line and returns 2."""
    from . import selection
    from .exceptions import CertificationError, SolverError
    try:
        bounds = _parse_bounds(args.bounds, args.loss)
        prescreen = None
        if args.prescreen is not None:
            name, k, frac = args.prescreen
            try:
                prescreen = (name, int(k), float(frac))
            except ValueError:
                raise ValueError(f"--prescreen: expected NAME K FRACTION, e.g. kendall 200 "
                                 f"0.3, got {' '.join(args.prescreen)}") from None
        if is_table(args.X):
            X, y = load_table(args.X, args.target, split=args.y is None)
            if args.y is not None:
                y = load_targets(args.y)
            print(f"X: {args.X} (table, {X.shape[0]} x {X.shape[1]}); y: "
                  f"{args.y if args.y is not None else f'column {y.name!r}'}")
        else:
            if args.target is not None:
                raise ValueError("--target: names a column of a .csv or .parquet X; with a "
                                 ".npy or .npz X pass the targets as a file")
            if args.y is None:
                raise ValueError("y: a .npy or .npz X needs the targets as a second file")
            X = load_design(args.X)
            y = load_targets(args.y)
            kind = ("sparse " + X.format.upper() if hasattr(X, "format")
                    else f"memmap {X.dtype}")
            print(f"X: {args.X} ({kind}, {X.shape[0]} x {X.shape[1]}, not densified); "
                  f"y: {args.y}")
        res = selection.private_bss(
            X, y, args.s, args.eps, bounds=bounds, loss=args.loss, ridge=args.ridge,
            radius=args.radius, method=args.method, backend=args.backend,
            n_draws=args.draws, prescreen=prescreen, time_limit=args.time_limit,
            random_state=args.seed, neighbours=args.neighbours)
    except (ValueError, TypeError, OSError, CertificationError, SolverError) as exc:
        print(f"mipdp select: {exc}", file=sys.stderr)
        return 2
    return _report_selection(args, res, bounds, prescreen)


def _parse_bounds(values, loss: str):
    """``--bounds``: ``ranks`` (the default), ``private``, ``data`` or ``B_X [B_Y]``."""
    if values is None:
        return "ranks"
    if len(values) == 1 and values[0] in ("ranks", "private", "data"):
        return values[0]
    try:
        nums = [float(v) for v in values]
    except ValueError:
        raise ValueError(f"--bounds: expected 'ranks', 'private', 'data', 'B_X B_Y' or one "
                         f"value, got {' '.join(values)}") from None
    if len(nums) not in (1, 2):
        raise ValueError(f"--bounds: expected 'B_X B_Y' or one value, got {' '.join(values)}")
    if len(nums) == 1:
        return (nums[0], None if loss == "hinge" else nums[0])
    return tuple(nums)


def _json_number(x):
    """A float for JSON: ``None`` for NaN (a release that is not private has ε = NaN)."""
    x = float(x)
    return None if np.isnan(x) else x


def _report_selection(args, res, bounds, prescreen) -> int:
    import json
    for i, S in enumerate(res.supports):
        names = ("" if res.feature_names_in is None
                 else f" ({', '.join(map(str, res.feature_names_in[S]))})")
        print(f"released support{'' if res.supports.shape[0] == 1 else f' {i + 1}'}: "
              f"{S.tolist()}{names}")
    print(f"guarantee: {res.guarantee}")
    clipped = res.info.get("clipped_fraction_not_private")
    if clipped is not None and not isinstance(bounds, str):
        print(f"not private, for the analyst: {clipped['X']:.1%} of X clipped to |x| <= "
              f"{bounds[0]:g}")
    if args.out:
        record = {"supports": res.supports.tolist(), "method": args.method,
                  "feature_names": None if res.feature_names_in is None
                  else [res.feature_names_in[S].tolist() for S in res.supports],
                  "epsilon": _json_number(res.epsilon), "delta": _json_number(res.delta),
                  "is_private": res.is_private, "guarantee": str(res.guarantee),
                  "bounds": bounds if isinstance(bounds, str) else list(bounds), "s": args.s, "eps_per_draw": args.eps,
                  "n_draws": args.draws, "prescreen": None if prescreen is None
                  else list(prescreen)}
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump(record, fh, indent=2)
        print(f"written: {args.out}")
    return 0


def _add_select_parser(sub) -> None:
    from .methods.registry import method_names
    sel = sub.add_parser(
        "select", help="release a support privately from X and y stored in files",
        description="Run private_bss on your data: X from a .npy file (opened as a "
                    "read-only memmap, never loaded whole), a .npz file written by "
                    "scipy.sparse.save_npz (kept sparse), or a CSV (with a header) or "
                    "Parquet table whose target column is chosen by --target (default: "
                    "the last column); y from a .npy, .csv or .txt file when X is an "
                    "array. Prints the released support(s) and the guarantee.")
    sel.add_argument("X", help="design matrix: X.npy (dense, memory-mapped), X.npz "
                               "(scipy sparse), or a table with a header, data.csv or "
                               "data.parquet (the target is one of its columns: --target)")
    sel.add_argument("y", nargs="?", default=None,
                     help="targets: y.npy, y.csv or y.txt (any two-class labels for --loss "
                          "hinge); omit it when X is a table holding the target column")
    sel.add_argument("--target", default=None, metavar="COLUMN",
                     help="target column of a .csv/.parquet X (default: its last column)")
    sel.add_argument("--s", type=int, required=True, help="support size")
    sel.add_argument("--eps", type=float, required=True, help="privacy budget of one draw")
    sel.add_argument("--bounds", nargs="+", default=None, metavar="B",
                     help="public clipping bounds from domain knowledge, not from the data: "
                          "'B_X B_Y', or one value for both (for --loss hinge: B_X); or "
                          "'ranks' (the default: no ranges needed, the data replaced by "
                          "their ranks), 'private' (ranges released with 10%% of eps) or "
                          "'data' (bounds read off the data: NOT private)")
    sel.add_argument("--loss", default="least_squares",
                     choices=["least_squares", "hinge", "huber"],
                     help="loss of the objective (default least_squares)")
    sel.add_argument("--method", default="exponential", choices=list(method_names()),
                     help="sampler (default exponential)")
    sel.add_argument("--draws", type=int, default=1,
                     help="independent releases (default 1; N draws spend N times --eps)")
    sel.add_argument("--prescreen", nargs=3, default=None, metavar=("NAME", "K", "FRACTION"),
                     help="private pre-screen: NAME (dp_sis, kendall, two_stage) keeps K "
                          "columns with FRACTION of --eps")
    sel.add_argument("--ridge", type=float, default=None,
                     help="ridge of the objective (default: derived from the bounds)")
    sel.add_argument("--radius", type=float, default=None,
                     help="radius of the coefficient ball (default: derived from the bounds)")
    sel.add_argument("--backend", default="highs",
                     help="MIP solver: highs (default), gurobi or pyomo")
    sel.add_argument("--time-limit", dest="time_limit", type=float, default=None,
                     help="seconds for the whole call; nothing is released on timeout")
    sel.add_argument("--neighbours", default="replace_one", choices=["replace_one", "add_remove"],
                     help="neighbour notion of the guarantee (default replace_one)")
    sel.add_argument("--seed", type=int, default=None,
                     help="seed of the sampler (default: fresh randomness)")
    sel.add_argument("--out", default=None,
                     help="also write the release (supports, guarantee) to this JSON file")
    sel.set_defaults(func=_select)


def _print_report(rep) -> None:
    for msg in rep.messages:
        print(msg, file=sys.stderr)
    refs = len(rep.references_computed)
    print(f"{rep.root}: {len(rep.computed)} cells computed, {len(rep.skipped)} already done"
          + (f" (+{refs} reference cells)" if refs else "") + f", {rep.wall_time_s:.1f}s")
    if not rep.summary.empty:
        import pandas as pd
        with pd.option_context("display.width", 200, "display.precision", 3):
            print("fraction of draws equal to the true support (mean over trials):")
            print(rep.summary.pivot(index="n", columns="method", values="exact_mean")
                  .to_string())
            if "p_truth_lo_mean" in rep.summary.columns:
                sel = rep.summary.dropna(subset=["p_truth_lo_mean"])
                if not sel.empty:
                    print("P(one draw = truth), exact or certified lower bound (mean over "
                          "trials):")
                    print(sel.pivot(index="n", columns="method", values="p_truth_lo_mean")
                          .to_string())
            if "em_truth_lo_mean" in rep.summary.columns:
                em = rep.summary.dropna(subset=["em_truth_lo_mean"]).groupby("n")[
                    ["em_truth_lo_mean", "em_truth_hi_mean"]].first()
                if not em.empty:
                    print("the exponential mechanism's P(truth), certified interval:")
                    print(em.to_string())
            if "unfinished" in rep.summary.columns and rep.summary["unfinished"].any():
                bad = rep.summary[rep.summary["unfinished"] > 0]
                for _, r in bad.iterrows():
                    print(f"not finished (time limit): {r['method']} n={r['n']}: "
                          f"{r['unfinished']} trial(s)")
    print(f"tables: {rep.root / 'draws.csv'}, {rep.root / 'summary.csv'}")


def _run_real(config, out, jobs) -> int:
    from .experiments.real_bench import run_real_study
    rep = run_real_study(config, out, jobs=jobs, progress=True)
    print(f"{config.name}: {rep['computed']} cells computed, {rep['skipped']} already done, "
          f"{rep['wall_time_s']:.1f} s")
    for method, note in sorted(rep["unavailable"].items()):
        print(f"method {method!r} not available (its cells are n/a): {note}")
    print(rep["tables"])
    print(f"tables: {rep['root'] / 'tables.md'}")
    return 0


def _run_experiment(config, out, jobs, backend, scheduler) -> int:
    from .experiments.real_bench import RealConfig
    if isinstance(config, RealConfig):
        return _run_real(config, out, jobs)
    from .experiments.runner import LossUnavailable, run_study
    try:
        rep = run_study(config, out, jobs=jobs, backend=backend, scheduler=scheduler,
                        progress=True)
    except LossUnavailable as exc:
        print(f"mipdp experiment: {exc}", file=sys.stderr)
        return 0
    _print_report(rep)
    return 0


def _experiment(args: argparse.Namespace) -> int:
    from .experiments.config import StudyConfig, load_config
    if args.kind == "run":
        config, run = load_config(args.config)
        if args.name:
            config.name = args.name
        out = args.out if args.out is not None else run.get("out", "results")
        jobs = args.jobs if args.jobs is not None else run.get("jobs", 1)
        backend = _joblib_backend(args)
        backend = backend if backend is not None else run.get("backend", "loky")
        scheduler = args.scheduler if args.scheduler is not None else run.get("scheduler")
        return _run_experiment(config, out, jobs, backend, scheduler)
    config = StudyConfig(kind=args.kind, p=args.p, s=args.s, eps=args.eps, ns=args.n,
                         trials=args.trials, draws=args.draws, methods=args.methods,
                         loss=args.loss, b_x=args.bound, b_y=args.bound, ridge=args.ridge,
                         radius=args.radius, rho=args.rho, snr=args.snr, seed=args.seed,
                         design=args.design, time_limit=args.time_limit,
                         extra_draws=args.extra_draws, em_ball=args.em_ball,
                         em_reference=args.em_reference, name=args.name)
    return _run_experiment(config, args.out or "results", args.jobs or 1,
                           _joblib_backend(args) or "loky", args.scheduler)


def _joblib_backend(args: argparse.Namespace) -> str | None:
    """``--joblib-backend``, or the deprecated ``--backend`` spelling (with a warning)."""
    if getattr(args, "deprecated_backend", None) is not None:
        print("mipdp experiment: --backend is deprecated here (it means the joblib backend, "
              "not the MIP solver); use --joblib-backend", file=sys.stderr)
        if args.joblib_backend is None:
            return args.deprecated_backend
    return args.joblib_backend


def _plot(args: argparse.Namespace) -> int:
    from .experiments.plotting import find_studies, plot_all
    if not find_studies(args.path):
        print(f"mipdp plot: no study (study.json) in {args.path} or below", file=sys.stderr)
        return 1
    written = plot_all(args.path, args.to)
    if not written:
        print(f"mipdp plot: nothing to plot in {args.path}: its studies have no finished "
              "trial yet (run or resume them with mipdp experiment)", file=sys.stderr)
        return 1
    for path in written:
        print(path)
    return 0


def _add_run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", default=None, help="results directory (default: results/)")
    p.add_argument("--name", default=None, help="study name (sub-directory of --out)")
    p.add_argument("--jobs", type=int, default=None,
                   help="trials run in parallel by joblib (default 1)")
    p.add_argument("--joblib-backend", dest="joblib_backend", default=None,
                   choices=["loky", "dask"],
                   help="how trials run in parallel: 'loky' (local processes, default) or "
                        "'dask' (a Dask cluster). The MIP solver is always HiGHS here.")
    p.add_argument("--backend", dest="deprecated_backend", default=None,
                   choices=["loky", "dask"], help=argparse.SUPPRESS)   # deprecated alias
    p.add_argument("--scheduler", default=None,
                   help="Dask scheduler address, e.g. tcp://host:8786 (default: a local "
                        "cluster)")


def _add_experiment_parser(sub) -> None:
    from .experiments.config import DEFAULT_METHODS
    exp = sub.add_parser("experiment", help="run a study of seed 002 (resumable sweep)")
    kinds = exp.add_subparsers(dest="kind", required=True)
    for kind, help_ in (("recovery", "support recovery against n"),
                        ("utility", "utility loss and test MSE with private coefficients "
                                    "(eps split half/half)")):
        k = kinds.add_parser(kind, help=help_, description=help_)
        k.add_argument("--p", type=int, default=100, help="number of features (default 100)")
        k.add_argument("--s", type=int, default=5, help="support size (default 5)")
        k.add_argument("--eps", type=float, default=1.0,
                       help="privacy budget of one draw (default 1.0)")
        k.add_argument("--n", type=int, nargs="+", default=[3000, 4000, 5000, 6000, 7000, 8000],
                       help="sample sizes to sweep (default 3000 ... 8000)")
        k.add_argument("--trials", type=int, default=10,
                       help="independent data sets per sample size (default 10)")
        k.add_argument("--draws", type=int, default=100,
                       help="private releases per data set (default 100)")
        k.add_argument("--methods", nargs="+", default=list(DEFAULT_METHODS),
                       help="methods to compare (default: %(default)s; also 'abess', a "
                            "non-private baseline)")
        k.add_argument("--loss", default="least_squares",
                       help="least_squares, hinge or huber (default least_squares)")
        k.add_argument("--bound", type=float, default=0.5,
                       help="public clipping bound b_x = b_y (default 0.5)")
        k.add_argument("--ridge", type=float, default=None,
                       help="ridge of the objective (default: derived from the bounds, "
                            "docs/guide.md 'The default score'; the seed's is 120)")
        k.add_argument("--radius", type=float, default=None,
                       help="radius of the coefficient ball (default: b_y / (b_x sqrt(s)), "
                            "1 / (b_x sqrt(s)) for hinge; the seed's is 1.1)")
        k.add_argument("--design", default="seed002", choices=["seed002", "cancel"],
                       help="synthetic design: 'seed002' (AR(1) columns with correlation "
                            "--rho, equal coefficients) or 'cancel' (sign cancellation: a true "
                            "feature with zero marginal correlation with y, where marginal "
                            "screening fails); default seed002")
        k.add_argument("--rho", type=float, default=None,
                       help="correlation of the design: seed002's AR(1) correlation "
                            "(default 0.1), or the cancelling pair's (default 0.7)")
        k.add_argument("--time-limit", dest="time_limit", type=float, default=None,
                       help="seconds per MIP cell (exponential, top_r, mistakes); a cell that "
                            "hits it releases nothing and is recorded as not finished "
                            "(default: none)")
        k.add_argument("--extra-draws", dest="extra_draws", type=int, default=1000,
                       help="further draws of the exponential mechanism per trial, for the "
                            "frequency of the truth over many cheap draws (default 1000)")
        k.add_argument("--em-ball", dest="em_ball", type=int, default=None,
                       help="mistake ball around the truth evaluated exactly for the "
                            "exponential mechanism's reference P(truth) (default: 2 at "
                            "p <= 200 for least squares, else 1)")
        k.add_argument("--no-em-reference", dest="em_reference", action="store_false",
                       help="skip the exponential mechanism's reference P(truth)")
        k.add_argument("--snr", type=float, default=5.0,
                       help="signal-to-noise ratio of the synthetic data (default 5)")
        k.add_argument("--seed", type=int, default=0, help="root seed of the study (default 0)")
        _add_run_options(k)
        k.set_defaults(func=_experiment)
    run = kinds.add_parser("run", help="run the study defined by a TOML config file")
    run.add_argument("config", help="path of the TOML study file (see docs/experiments.md)")
    _add_run_options(run)
    run.set_defaults(func=_experiment)
    plot = sub.add_parser("plot", help="PNG figures of the studies under a results directory")
    plot.add_argument("path", help="results directory (searched recursively for study.json)")
    plot.add_argument("--to", default=None, help="write all figures here (prefixed by study)")
    plot.set_defaults(func=_plot)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``mipdp`` command."""
    parser = argparse.ArgumentParser(
        prog="mipdp",
        description="Differentially private best subset selection by mixed-integer "
                    "optimization. Subcommands: demo (the samplers on synthetic data), "
                    "select (a private release from X and y stored in .npy/.npz files), "
                    "backends (which MIP solvers are installed), experiment (resumable "
                    "studies), plot (their figures), audit (exact and empirical privacy "
                    "audit). 'mipdp SUBCOMMAND --help' lists the options of each.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress")
    parser.add_argument("--version", action="version", version=f"mipdp {_version()}",
                        help="print the version and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="SUBCOMMAND")
    demo = sub.add_parser("demo", help="run the samplers on seed 002's synthetic data",
                          description="Generate seed 002's synthetic design, release a "
                                      "support with each method and print it with its "
                                      "guarantee, the probability that one draw is the true "
                                      "support (exact, or certified bounds) and the time of "
                                      "each phase.")
    demo.add_argument("--n", type=int, default=3000, help="number of rows (default 3000)")
    demo.add_argument("--p", type=int, default=100, help="number of features (default 100)")
    demo.add_argument("--s", type=int, default=5, help="support size (default 5)")
    demo.add_argument("--eps", type=float, default=1.0,
                      help="privacy budget of one draw (default 1.0)")
    demo.add_argument("--loss", default="least_squares", choices=["least_squares", "hinge", "huber"],
                      help="loss of the objective (default least_squares)")
    demo.add_argument("--ridge", type=float, default=None,
                      help="ridge of the objective (default: derived from the bounds, "
                           "docs/guide.md 'The default score'; the seed's is 120)")
    demo.add_argument("--radius", type=float, default=None,
                      help="radius of the coefficient ball (default: b_y / (b_x sqrt(s)), "
                           "1 / (b_x sqrt(s)) for hinge; the seed's is 1.1)")
    demo.add_argument("--bound", type=float, default=0.5,
                      help="public clipping bound for X and y (default 0.5)")
    demo.add_argument("--backend", default="highs",
                      help="MIP solver: highs (default), gurobi or pyomo ('mipdp backends' "
                           "lists the installed ones)")
    from .methods.registry import method_names
    demo.add_argument("--methods", nargs="+", default=["exponential", "top_r", "mistakes"],
                      choices=list(method_names()),
                      help="samplers to run (default: exponential top_r mistakes)")
    demo.add_argument("--draws", type=int, default=20,
                      help="independent releases per method, to show how often the truth "
                           "is released (default 20; each draw is a separate release, so "
                           "N draws spend N times --eps)")
    demo.add_argument("--seed", type=int, default=0,
                      help="seed of the data and of the sampler (default 0)")
    demo.set_defaults(func=_demo)
    _add_select_parser(sub)
    back = sub.add_parser("backends", help="list the MIP backends and whether they are installed")
    back.set_defaults(func=_backends)
    _add_experiment_parser(sub)
    audit = sub.add_parser("audit", help="exact and empirical privacy audit of every mechanism")
    audit.add_argument("--quick", action="store_true", help="fewer instances and draws")
    audit.add_argument("--backend", default="highs",
                       help="MIP backend of the private_bss rows (default highs)")
    audit.set_defaults(func=lambda a: __import__("mipdp.audit", fromlist=["main"]).main(
        (["--quick"] if a.quick else []) + ["--backend", a.backend]))
    return parser


def _version() -> str:
    from . import __version__
    return __version__


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``mipdp`` command.

    Ctrl-C prints one line (``mipdp: interrupted``) and returns 130 (128 + SIGINT), the
    shell's convention, without a traceback.
    """
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print("\nmipdp: interrupted", file=sys.stderr)
        return 130


def _main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    for name in PROGRESS_LOGGERS:  # a long enumeration is never silent
        logging.getLogger(name).setLevel(logging.INFO)
    try:
        from tqdm.contrib.logging import logging_redirect_tqdm
    except ImportError:
        return args.func(args)
    with logging_redirect_tqdm():  # log lines above the progress bars, not through them
        return args.func(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
