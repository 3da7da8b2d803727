"""``mipdp select``: a private release from X and y stored in files.

Part of :mod:`mipdp.cli`.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from .inputs import is_table, load_design, load_table, load_targets


def _select(args: argparse.Namespace) -> int:
    """``mipdp select``: a bad file or parameter prints one line and returns 2."""
    from .. import selection
    from .._validation import interface
    from ..exceptions import CertificationError, SolverError
    try:
        with interface("mipdp select"):   # the input errors name the command
            res, bounds, prescreen = _select_in(args, selection)
    except (ValueError, TypeError, OSError, CertificationError, SolverError) as exc:
        msg = str(exc)
        print(msg if msg.startswith("mipdp select: ") else f"mipdp select: {msg}",
              file=sys.stderr)
        return 2
    return _report_selection(args, res, bounds, prescreen)


def _select_in(args: argparse.Namespace, selection):
    """Read the files and release: ``(result, bounds, prescreen)``."""
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
    return res, bounds, prescreen


def _parse_bounds(values, loss: str):
    """``--bounds``: ``None`` when absent (private_bss's data-free rule between ``ranks`` and
    ``kendall``), ``ranks``, ``kendall``, ``private``, ``data`` or ``B_X [B_Y]``."""
    if values is None:
        return None
    if len(values) == 1 and values[0] in ("ranks", "kendall", "private", "data"):
        return values[0]
    try:
        nums = [float(v) for v in values]
    except ValueError:
        raise ValueError(f"--bounds: expected 'ranks', 'kendall', 'private', 'data', 'B_X B_Y' "
                         f"or one value, got {' '.join(values)}") from None
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
    if clipped is not None and not isinstance(bounds, str) and bounds is not None:
        print(f"not private, for the analyst: {clipped['X']:.1%} of X clipped to |x| <= "
              f"{bounds[0]:g}")
    if args.out:
        record = {"supports": res.supports.tolist(), "method": args.method,
                  "feature_names": None if res.feature_names_in is None
                  else [res.feature_names_in[S].tolist() for S in res.supports],
                  "epsilon": _json_number(res.epsilon), "delta": _json_number(res.delta),
                  "is_private": res.is_private, "guarantee": str(res.guarantee),
                  "bounds": (res.info.get("bounds") if bounds is None
                             else bounds if isinstance(bounds, str) else list(bounds)),
                  "s": args.s,
                  "eps_per_draw": args.eps, "n_draws": args.draws,
                  "prescreen": None if prescreen is None else list(prescreen)}
        if "bounds_rule" in res.info:
            record["bounds_rule"] = res.info["bounds_rule"]
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump(record, fh, indent=2)
        print(f"written: {args.out}")
    return 0


def _add_select_parser(sub) -> None:
    from ..methods.registry import method_names
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
                          "'ranks' (no ranges needed, the data replaced by their ranks), "
                          "'kendall' (no ranges: the redundancy-aware Kendall "
                          "score, least squares only), 'private' (ranges released with 10%% "
                          "of eps) or "
                          "'data' (bounds read off the data: NOT private); default: no "
                          "ranges, the Kendall score for least squares when "
                          "n * min(eps, 1) < 1000, "
                          "else ranks (as private_bss with bounds=None)")
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
