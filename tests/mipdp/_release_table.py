"""The recorded release table: ~40 ``private_bss`` configurations on small data.

``python tests/mipdp/_release_table.py`` (with ``PYTHONPATH`` at the tree) rewrites
``tests/mipdp/data/releases_before_refactor.json``; ``test_release_table.py`` recomputes
every row and compares.  Each row: the released supports (``n_draws=3``), the guarantee's
string, ``result.epsilon`` and the keys of ``result.info``, ``result.timings`` and
``result.stats``.  Rows are re-recorded only when a change of releases is deliberate (say
which in the commit message).
"""

from __future__ import annotations

import json
import math
import os
import sys
import warnings

import numpy as np

TABLE = os.path.join(os.path.dirname(__file__), "data", "releases_before_refactor.json")
B = (0.5, 0.5)
SEED = 7


def _data(loss: str, n: int = 80, p: int = 8, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) * 0.4
    beta = np.zeros(p)
    beta[[1, 4, 6]] = 1.0
    y = X @ beta * 0.5 + 0.2 * rng.normal(size=n)
    if loss == "hinge":
        y = np.where(y > 0, 1.0, -1.0)
    return X, y


def configurations() -> dict[str, dict]:
    """Name -> keyword arguments of ``private_bss`` (besides X, y, s=2, eps=1.0).

    The "ranks" rows name ``bounds="ranks"`` (recorded when ``bounds=None`` meant it; it now
    runs a rule, tested in ``test_bounds_free.py``).
    """
    cfg: dict[str, dict] = {}
    methods = {"exponential": {}, "permute_and_flip": {}, "top_r": {"R": 6},
               "mistakes": {}, "mistakes_delta": {"method": "mistakes", "delta": 1e-6}}
    for name, extra in methods.items():
        kw = {"method": extra.pop("method", name), **extra}
        for bname, bounds in [("tuple", B), ("ranks", "ranks"), ("private", "private"),
                              ("data", "data")]:
            cfg[f"{name}-ls-{bname}"] = dict(kw, bounds=bounds)
    for loss in ("hinge", "huber"):
        for bname, bounds in [("tuple", (0.5, None) if loss == "hinge" else B),
                              ("private", "private"), ("data", "data")]:
            cfg[f"exponential-{loss}-{bname}"] = dict(loss=loss, bounds=bounds)
    cfg["exponential-hinge-ranks"] = dict(loss="hinge", bounds="ranks")
    cfg["top_r-hinge-tuple"] = dict(loss="hinge", bounds=(0.5, None), method="top_r", R=5)
    for pre in ("dp_sis", "kendall", "two_stage", "noisy_iht"):
        cfg[f"exponential-ls-tuple-pre_{pre}"] = dict(bounds=B, prescreen=(pre, 5, 0.3))
    cfg["exponential-ls-ranks-pre_kendall"] = dict(bounds="ranks",
                                                  prescreen=("kendall", 5, 0.3))
    cfg["exponential-ls-private-pre_dp_sis"] = dict(bounds="private",
                                                   prescreen=("dp_sis", 5, 0.3))
    cfg["mistakes_delta-ls-tuple-pre_kendall"] = dict(bounds=B, method="mistakes", delta=1e-6,
                                                     prescreen=("kendall", 5, 0.3))
    for name, kw in [("exponential", {}), ("permute_and_flip", {}), ("top_r", {"R": 6}),
                     ("mistakes_delta", {"method": "mistakes", "delta": 1e-6})]:
        kw = {"method": name, **kw}
        for bname, bounds in [("tuple", B), ("ranks", "ranks"), ("private", "private")]:
            if name == "mistakes_delta" and bname == "ranks":
                continue
            cfg[f"{name}-ls-{bname}-add_remove"] = dict(kw, bounds=bounds,
                                                        neighbours="add_remove")
    mip = {"exhaustive_max": 0, "explicit_max": 0}       # the MIP backend, not exhaustive
    for name, kw in [("exponential", {}), ("top_r", {"R": 6}), ("permute_and_flip", {})]:
        cfg[f"{name}-ls-tuple-mip"] = dict(kw, method=name, bounds=B, enumeration_options=mip)
    return cfg


def _jsonable_bounds(kw: dict) -> dict:
    out = dict(kw)
    if isinstance(out.get("bounds"), tuple):
        out["bounds"] = list(out["bounds"])
    if "prescreen" in out:
        out["prescreen"] = list(out["prescreen"])
    return out


def run(name: str, kw: dict) -> dict:
    """One row of the table: recompute the release of configuration ``name``."""
    from mipdp import private_bss
    loss = kw.get("loss", "least_squares")
    X, y = _data(loss)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = private_bss(X, y, 2, 1.0, n_draws=3, random_state=SEED, **kw)
    eps = float(res.epsilon)
    return {"supports": np.asarray(res.supports).tolist(), "guarantee": str(res.guarantee),
            "epsilon": None if math.isnan(eps) else eps,
            "info_keys": sorted(res.info), "timings_keys": sorted(res.timings),
            "stats_keys": sorted(res.stats)}


def record(names=None) -> None:
    """Recompute rows (all, or only ``names``) and write the table."""
    table = {}
    if os.path.exists(TABLE):
        with open(TABLE) as fh:
            table = json.load(fh)
    for name, kw in configurations().items():
        if names and name not in names:
            continue
        table[name] = {"kwargs": repr(_jsonable_bounds(kw)), **run(name, kw)}
    with open(TABLE, "w") as fh:
        json.dump(table, fh, indent=1, sort_keys=True)
        fh.write("\n")


if __name__ == "__main__":
    record(sys.argv[1:] or None)
