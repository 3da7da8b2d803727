"""``mipdp experiment`` and ``mipdp plot``: resumable studies and their figures.

Part of :mod:`mipdp.cli`.
"""

from __future__ import annotations

import argparse
import sys


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
    from ..experiments.real_bench import run_real_study
    rep = run_real_study(config, out, jobs=jobs, progress=True)
    print(f"{config.name}: {rep['computed']} cells computed, {rep['skipped']} already done, "
          f"{rep['wall_time_s']:.1f} s")
    for method, note in sorted(rep["unavailable"].items()):
        print(f"method {method!r} not available (its cells are n/a): {note}")
    print(rep["tables"])
    print(f"tables: {rep['root'] / 'tables.md'}")
    return 0


def _run_experiment(config, out, jobs, backend, scheduler) -> int:
    from ..experiments.real_bench import RealConfig
    if isinstance(config, RealConfig):
        return _run_real(config, out, jobs)
    from ..experiments.runner import LossUnavailable, run_study
    try:
        rep = run_study(config, out, jobs=jobs, backend=backend, scheduler=scheduler,
                        progress=True)
    except LossUnavailable as exc:
        print(f"mipdp experiment: {exc}", file=sys.stderr)
        return 0
    _print_report(rep)
    return 0


def _report(args: argparse.Namespace) -> int:
    """``mipdp experiment report``: run the missing studies of a studies file, then tables."""
    from pathlib import Path

    from ..experiments.config import load_studies
    from ..experiments.report import doc_blocks, run_missing, update_doc
    entries = load_studies(args.config)
    results = Path(args.results) / "smoke" if args.smoke else Path(args.results)
    only = args.only
    if only is None and args.update_doc and not args.all:
        only = [n for n in doc_blocks(Path(args.update_doc)) if n in entries]
    if not args.no_run:
        try:
            ran = run_missing(entries, results, smoke=args.smoke, only=only, jobs=args.jobs,
                              log=lambda msg: print(msg, flush=True))
        except ValueError as exc:
            print(f"mipdp experiment report: {exc}", file=sys.stderr)
            return 2
        print(f"{len(ran)} studies run, results in {results}")
    if args.update_doc:
        written = update_doc(Path(args.update_doc), results)
        print(f"{args.update_doc}: {len(written)} table blocks rewritten from {results}")
    return 0


def _run_named(args: argparse.Namespace) -> int:
    """``mipdp experiment run STUDIES.toml --study NAME``."""
    from ..experiments.config import load_studies
    from ..experiments.studies import run_module_study
    entries = load_studies(args.config)
    if args.study not in entries:
        print(f"mipdp experiment: no study {args.study!r} in {args.config}; known: "
              f"{list(entries)}", file=sys.stderr)
        return 2
    entry = entries[args.study]
    out = args.out if args.out is not None else entry.run.get("out", "results")
    if entry.kind == "module":
        root = run_module_study(entry.name, str(entry.module), entry.module_runs(args.smoke),
                                out, smoke=args.smoke, folder=entry.folder)
        print((root / "tables.md").read_text(encoding="utf-8"))
        print(f"tables: {root / 'tables.md'}; output: {root / 'output.txt'}")
        return 0
    config = entry.runner_config(args.smoke)
    if args.name:
        config.name = args.name
    jobs = args.jobs if args.jobs is not None else entry.run.get("jobs", 1)
    backend = _joblib_backend(args)
    backend = backend if backend is not None else entry.run.get("backend", "loky")
    scheduler = args.scheduler if args.scheduler is not None else entry.run.get("scheduler")
    return _run_experiment(config, out, jobs, backend, scheduler)


def _experiment(args: argparse.Namespace) -> int:
    from ..experiments.config import StudyConfig, load_config
    if args.kind == "report":
        return _report(args)
    if args.kind == "run" and args.study is not None:
        return _run_named(args)
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
    from ..experiments.plotting import find_studies, plot_all
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
    from ..experiments.config import DEFAULT_METHODS
    exp = sub.add_parser("experiment", help="run a study (resumable sweep)")
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
                            "docs/guide.md 'The default score'; the paper's is 120)")
        k.add_argument("--radius", type=float, default=None,
                       help="radius of the coefficient ball (default: b_y / (b_x sqrt(s)), "
                            "1 / (b_x sqrt(s)) for hinge; the paper's is 1.1)")
        k.add_argument("--design", default="seed002", choices=["seed002", "cancel"],
                       help="synthetic design: 'seed002' (the design of Prastakos et al. "
                            "2025: AR(1) columns with correlation --rho, equal coefficients) "
                            "or 'cancel' (sign cancellation: a true feature with zero marginal "
                            "correlation with y, where marginal "
                            "screening fails); default seed002")
        k.add_argument("--rho", type=float, default=None,
                       help="correlation of the design: the AR(1) correlation of 'seed002' "
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
    run = kinds.add_parser("run", help="run the study defined by a TOML config file, or one "
                                       "named study of a studies file (--study)")
    run.add_argument("config", help="path of the TOML study file, or of a studies file such "
                                    "as experiments/studies.toml with --study (see "
                                    "docs/experiments.md)")
    run.add_argument("--study", default=None,
                     help="the named study of a studies file to run (e.g. seed002_ls)")
    run.add_argument("--smoke", action="store_true",
                     help="with --study: tiny sizes (proves it runs; the figures mean nothing)")
    _add_run_options(run)
    run.set_defaults(func=_experiment)
    rep = kinds.add_parser(
        "report", help="run the missing studies of a studies file, then rewrite the tables "
                       "of a page", description="Run every study of the studies file whose "
        "results are missing under --results (a runner study resumes; a module study runs "
        "once), then rewrite the table blocks of --update-doc from the results.")
    rep.add_argument("config", help="studies file, e.g. experiments/studies.toml")
    rep.add_argument("--results", default="results", help="results directory (default: "
                                                         "results/)")
    rep.add_argument("--update-doc", dest="update_doc", default=None,
                     help="markdown page whose table blocks to rewrite, e.g. "
                          "docs/experiments.md (then only the studies it shows are run, "
                          "unless --all)")
    rep.add_argument("--smoke", action="store_true",
                     help="tiny sizes, into RESULTS/smoke/ (proves every study runs end to "
                          "end; the figures mean nothing)")
    rep.add_argument("--only", nargs="+", default=None, help="these studies only")
    rep.add_argument("--all", action="store_true",
                     help="every study of the file, not only those the page shows")
    rep.add_argument("--no-run", dest="no_run", action="store_true",
                     help="run nothing: rewrite the page from the results there are")
    rep.add_argument("--jobs", type=int, default=None,
                     help="joblib jobs of the runner studies (default: their config's; 1 in "
                          "--smoke)")
    rep.set_defaults(func=_experiment)
    plot = sub.add_parser("plot", help="PNG figures of the studies under a results directory")
    plot.add_argument("path", help="results directory (searched recursively for study.json)")
    plot.add_argument("--to", default=None, help="write all figures here (prefixed by study)")
    plot.set_defaults(func=_plot)
