"""Routes to a bounds-free default, judged by test R² on the benchmark's cells (issue 37).

Reads the cells of ``bench.py`` (exact laws from the training rows, every support's test
R²) and scores, per set, split kind, ``s`` and ``ε``, the mean test R² over splits of:

``ranks``, ``kendall_score``, ``dpkendall``
    the releases as they are;
``ranks x c``
    a what-if: the rank release at ``c · ε``, i.e. what a rank sensitivity smaller by the
    factor ``c`` would give (``c = 0.789/0.48 = 1.65``: the ratio the issue quotes).  Not a
    release: no such bound is proven;
``mix a``
    the exponential mechanism with the utility ``a·u_rank/Δ_rank + (1 − a)·u_K/Δ_K``
    (``u`` each score's utility, ``Δ`` its proven sensitivity): its sensitivity is at most
    ``a + (1 − a) = 1``, so at ``ε`` it is ε-DP under the notion both ``Δ`` hold for; its
    law is ``∝ P_rank,ε(S)^a · P_K,ε(S)^(1−a)``, exact from the two laws;
``rule T``
    a data-free rule over the public ``n`` (training rows) and ``ε``: the Kendall score
    when ``n · ε < T``, else the ranks;
``nrule T``
    the Kendall score when ``n < T`` whatever ``ε``;
``both T``
    the Kendall score when ``n · min(ε, 1) < T`` (``n < T`` or ``n · ε < T``; ``both 1000``
    is ``bounds=None``);
``rule+x``, ``both+x``
    ``rule 1000``, ``both 1000`` with the rank release at ``1.65 ε`` (the what-if above).

The count of each cell: the 8 overlap-benchmark regression sets where the route is within
0.01 of DPKendall's test R² or above, how many where it is below the mean support, and
the joint-effect set's margin over DPKendall.

    python experiments/test_r2/routes.py --out results/test_r2

Every figure is an evaluation quantity computed with the data: **not private**.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import REGRESSION, load, load_cells, mean_se  # noqa: E402

SETS = REGRESSION + ["Carseats", "Computers", "TeachingRatings", "RecreationDemand",
                     "CreditCard", "Medicaid1986", "JointEffect"]


def _norm(w):
    w = np.maximum(w, 0.0)
    return w / w.sum()


def route_law(route, laws, eps, n_train):
    r, k = laws["ranks"], laws.get("kendall_score")
    if route in ("ranks", "kendall_score", "dpkendall"):
        return laws[route][eps]
    if route.startswith("ranks x"):
        c = float(route.split("x")[1])
        base = r[1.0]                          # law at 1 -> law at c·eps: power c·eps
        lp = c * eps * np.log(np.maximum(base, 1e-300))
        return _norm(np.exp(lp - lp.max()))
    if route.startswith("mix"):
        a = float(route.split()[1])
        lp = a * np.log(np.maximum(r[eps], 1e-300)) + (1 - a) * np.log(
            np.maximum(k[eps], 1e-300))
        return _norm(np.exp(lp - lp.max()))
    if route.startswith("rule+x"):                      # the rule with ranks at 1.65 eps
        return k[eps] if n_train * eps < 1000 else route_law("ranks x1.65", laws, eps, n_train)
    if route.startswith("both+x"):                      # bounds=None with ranks at 1.65 eps
        return (k[eps] if n_train * min(eps, 1.0) < 1000
                else route_law("ranks x1.65", laws, eps, n_train))
    if route.startswith("rule"):
        T = float(route.split()[1])
        return k[eps] if n_train * eps < T else r[eps]
    if route.startswith("nrule"):
        T = float(route.split()[1])
        return k[eps] if n_train < T else r[eps]
    if route.startswith("both"):
        T = float(route.split()[1])
        return k[eps] if n_train * min(eps, 1.0) < T else r[eps]
    raise ValueError(route)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="results/test_r2")
    ap.add_argument("--splits", type=int, default=10)
    ap.add_argument("--fracs", nargs="+", type=float, default=[0.1, 0.3])
    ap.add_argument("--routes", nargs="+", default=[
        "ranks", "kendall_score", "ranks x1.65", "mix 0.25", "mix 0.5", "mix 0.75",
        "rule 600", "rule 1000", "rule 1500", "rule 3000", "nrule 1000", "both 1000",
        "rule+x", "both+x"])
    a = ap.parse_args(argv)
    out = Path(a.out)
    res = {}
    ntrain = {name: len(load(name).y) for name in SETS}
    for name in SETS:
        for frac in a.fracs:
            for s in (3, 5):
                cells = load_cells(out, name, frac, a.splits, s)
                if not cells:
                    continue
                nt = ntrain[name] - round(frac * ntrain[name])
                for eps in (1.0, 5.0):
                    row = {"mean": mean_se([c["scale"][0] for c in cells])[0],
                           "dpkendall": mean_se([c["laws"]["dpkendall"][eps] @ c["test_values"]
                                                 for c in cells])}
                    for rt in a.routes:
                        row[rt] = mean_se([route_law(rt, c["laws"], eps, nt) @ c["test_values"]
                                           for c in cells])
                    res[(name, frac, s, eps)] = row
    lines = []
    for frac in a.fracs:
        for s in (3, 5):
            for eps in (1.0, 5.0):
                head = f"{round((1 - frac) * 100)}/{round(frac * 100)}, s = {s}, ε = {eps:g}"
                cells = []
                for rt in a.routes:
                    win = below = n = 0
                    for name in REGRESSION:
                        row = res.get((name, frac, s, eps))
                        if row is None:
                            continue
                        n += 1
                        win += row[rt][0] >= row["dpkendall"][0] - 0.01
                        below += row[rt][0] < row["mean"]
                    j = res.get(("JointEffect", frac, s, eps))
                    jm = f"{j[rt][0] - j['dpkendall'][0]:+.2f}" if j else "n/a"
                    added = sum(res[(nm, frac, s, eps)][rt][0]
                                >= res[(nm, frac, s, eps)]["dpkendall"][0] - 0.01
                                for nm in SETS[8:-1] if (nm, frac, s, eps) in res)
                    cells.append(f"{win}/{n} ({below}) +{added}/6 J{jm}")
                lines.append(f"| {head} | " + " | ".join(cells) + " |")
    text = ("| cell | " + " | ".join(a.routes) + " |\n|---|" + "---|" * len(a.routes) + "\n"
            + "\n".join(lines) + "\n\nEach entry: sets of the 8 within 0.01 of DPKendall or "
            "above (how many below the mean support), the same count on the 6 added sets, "
            "and J: the joint-effect set's test R² minus DPKendall's.\n")
    print(text)
    detail = {"|".join(map(str, k)): v for k, v in res.items()}
    (out / "routes.json").write_text(json.dumps(detail, indent=1))
    (out / "routes.md").write_text(text)


if __name__ == "__main__":
    main()
