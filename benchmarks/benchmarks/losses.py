"""The batched support objectives of the hinge and Huber losses (``SupportObjective.values``).

Time per call of ``values`` on a batch of random supports (1, 100, 10 000) and on one whole
one-swap neighbourhood, seed 002's classification design (hinge, λ = 120, r = 1.1) and
regression design (Huber δ = 1), n = 3000, p = 100, s = 5.  Replaces
``experiments/bench_losses.py`` (whose frozen copy of the old solvers is gone: compare two
checkouts with ``asv compare`` instead).
"""

import numpy as np

from .common import N, S, load, quiet, shrink


class LossValues:
    """``values`` of a batch of supports (data loaded and bound in ``setup``)."""

    params = [["hinge", "huber"], [1, 100, 10_000, "one-swap"]]
    param_names = ["loss", "batch"]
    number = 1
    repeat = (1, 5, 60.0)
    timeout = 900

    def setup(self, loss, batch):
        from mipdp._validation import clip_data
        from mipdp.losses import get_loss
        quiet()
        n, p = shrink(N, 100)
        s = min(S, p - 1)
        kind = "classification" if loss == "hinge" else "regression"
        X, y, truth = load(kind, N, 100)
        b_y = None if loss == "hinge" else 0.5
        Xc, yc = clip_data(X, y, 0.5, b_y)
        obj = get_loss(loss, ridge=120.0, radius=1.1).bind(Xc, yc)
        obj.values(np.sort(np.asarray(truth))[None, :s])          # one-time caches
        self.obj, self.truth = obj, np.sort(np.asarray(truth))[:s]
        rng = np.random.default_rng(0)
        if batch != "one-swap":
            self.supports = np.sort(np.array([rng.choice(p, s, replace=False)
                                              for _ in range(int(batch))]), axis=1)

    def time_values(self, loss, batch):
        if batch == "one-swap":
            self.obj.one_swap_values(self.truth)
        else:
            self.obj.values(self.supports)
