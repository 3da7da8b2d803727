"""The ``mipdp`` command: demo, select, backends, experiment, plot and audit subcommands.

One module per job: :mod:`.progress` (progress bars), :mod:`.demo`, :mod:`.inputs`
(reading files), :mod:`.select`, :mod:`.experiment` (studies and plots); the parser and
the entry point here.
"""

from __future__ import annotations

import argparse
import logging
import sys

from .demo import DEMO_LEGEND, _backends, _demo  # noqa: F401
from .experiment import (  # noqa: F401
    _add_experiment_parser,
    _add_run_options,
    _experiment,
    _joblib_backend,
    _plot,
    _print_report,
    _run_experiment,
    _run_real,
)
from .inputs import TABLE_EXTENSIONS, is_table, load_design, load_table, load_targets  # noqa: F401
from .progress import PROGRESS_LOGGERS, TICK_SECONDS, _overall_bar, _progress_bar  # noqa: F401
from .select import _add_select_parser, _json_number, _parse_bounds, _report_selection, _select  # noqa: F401

__all__ = ["main"]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``mipdp`` command."""
    parser = argparse.ArgumentParser(
        prog="mipdp",
        description="Differentially private best subset selection by mixed-integer "
                    "optimization. Subcommands: demo (the samplers on synthetic data), "
                    "select (a private release from a CSV or Parquet table, or from X and y "
                    "stored in .npy/.npz files), "
                    "backends (which MIP solvers are installed), experiment (resumable "
                    "studies), plot (their figures), audit (exact and empirical privacy "
                    "audit). 'mipdp SUBCOMMAND --help' lists the options of each.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress")
    parser.add_argument("--version", action="version", version=f"mipdp {_version()}",
                        help="print the version and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="SUBCOMMAND")
    demo = sub.add_parser("demo", help="run the samplers on synthetic data",
                          description="Generate Prastakos et al.'s (2025) design, release a "
                                      "support with each method and print it with its "
                                      "guarantee, the probability that one draw is the true "
                                      "support (exact, or certified bounds) and the time of "
                                      "each phase.")
    demo.add_argument("--n", type=int, default=3000, help="number of rows (default 3000)")
    demo.add_argument("--p", type=int, default=100, help="number of features (default 100)")
    demo.add_argument("--s", type=int, default=5, help="support size (default 5)")
    demo.add_argument("--eps", type=float, default=1.0,
                      help="privacy budget of one draw (default 1.0)")
    demo.add_argument("--loss", default="least_squares",
                      choices=["least_squares", "hinge", "huber"],
                      help="loss of the objective (default least_squares)")
    demo.add_argument("--ridge", type=float, default=None,
                      help="ridge of the objective (default: derived from the bounds, "
                           "docs/guide.md 'The default score'; the paper's is 120)")
    demo.add_argument("--radius", type=float, default=None,
                      help="radius of the coefficient ball (default: b_y / (b_x sqrt(s)), "
                           "1 / (b_x sqrt(s)) for hinge; the paper's is 1.1)")
    demo.add_argument("--bound", type=float, default=0.5,
                      help="public clipping bound for X and y (default 0.5)")
    demo.add_argument("--backend", default="highs",
                      help="MIP solver: highs (default), gurobi or pyomo ('mipdp backends' "
                           "lists the installed ones)")
    from ..methods.registry import method_names
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
    from .. import __version__
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
