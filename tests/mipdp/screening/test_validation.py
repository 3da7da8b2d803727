"""Bad inputs raise a ValueError that names the offending argument."""

import numpy as np
import pytest

from mipdp import screening as S

rng = np.random.default_rng(0)
X = rng.uniform(-1, 1, (30, 4))
y = rng.uniform(-1, 1, 30)
OK = {"eps_opt": 1.0, "delta_opt": 1e-5, "eps_screen": 1.0, "delta_screen": 1e-5}


@pytest.mark.parametrize("kwargs, match", [
    ({"l1_radius": 0.0}, "l1_radius"),
    ({"l1_radius": -1.0}, "l1_radius"),
    ({"l1_radius": np.nan}, "l1_radius"),
    ({"n_iter": 0}, "n_iter"),
    ({"n_iter": 2.5}, "n_iter"),
    ({"eps": 0.0}, "eps"),
    ({"eps": -1.0}, "eps"),
    ({"delta": None}, "delta"),
    ({"delta": 0.0}, "delta"),
    ({"delta": 1.5}, "delta"),
    ({"loss": "hinge"}, "loss"),
    ({"calibration": "loose"}, "calibration"),
    ({"init": "ones"}, "init"),
    ({"init": np.ones(3)}, "init"),
    ({"init": np.full(4, 10.0)}, "init"),
    ({"bounds": (-1.0, 1.0)}, "bounds"),
    ({"bounds": (2.0, 1.0), "calibration": "seed"}, "bounds"),
])
def test_dp_frank_wolfe_rejects(kwargs, match):
    args = {"l1_radius": 1.0, "n_iter": 10, "eps": 1.0, "delta": 1e-5}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        S.dp_frank_wolfe(X, y, **args)


@pytest.mark.parametrize("kwargs, match", [
    ({"eps_screen": 0.0}, "eps_screen"),
    ({"delta_screen": None}, "delta_screen"),
    ({"delta_screen": 2.0}, "delta_screen"),
    ({"eps_opt": -2.0}, "eps"),
    ({"delta_opt": None}, "delta"),
])
@pytest.mark.parametrize("method", ["rnm_screen", "adp_screen"])
def test_screening_rejects(method, kwargs, match):
    args = dict(OK, **kwargs)
    with pytest.raises(ValueError, match=match):
        extra = {"screen_every": 5} if method == "adp_screen" else {}
        getattr(S, method)(X, y, 1.0, 10, **args, **extra)


@pytest.mark.parametrize("kwargs, match", [
    ({"screen_every": 0}, "screen_every"),
    ({"screen_every": 11}, "screen_every"),
    ({"screen_at": [0, 3]}, "screen_at"),
    ({"screen_at": [11]}, "screen_at"),
    ({"screen_at": ["a"]}, "screen_at"),
    ({"eps_screen": 50.0, "screen_every": 10}, "eps_screen"),   # ε_iter >= 1: no classic Gaussian
])
def test_adp_screen_rejects(kwargs, match):
    args = dict(OK, **kwargs)
    with pytest.raises(ValueError, match=match):
        S.adp_screen(X, y, 1.0, 10, **args)


def test_data_errors_name_the_argument():
    with pytest.raises(ValueError, match="X and y"):
        S.dp_frank_wolfe(X, y[:-1], 1.0, 10, eps=np.inf)
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="X"):
        S.dp_frank_wolfe(Xn, y, 1.0, 10, eps=np.inf)
    with pytest.raises(ValueError, match="y"):
        S.dp_frank_wolfe(X, 2 * y + 3, 1.0, 10, eps=np.inf, loss="logistic")
    with pytest.raises(ValueError, match="w"):
        S.screening_scores(X, y, np.ones(4), 1.0)
    with pytest.raises(ValueError, match="w"):
        S.screening_scores(X, y, np.zeros(5), 1.0)
    with pytest.raises(ValueError, match="n_screens"):
        S.adp_noise(30, 4, 1.0, 0, 1.0, 1e-5)


def test_logistic_labels_run_whatever_their_counts():
    """±1 labels with one label flipped (a neighbour) must run; a one-class vector is valid."""
    Xl = rng.uniform(-1, 1, (12, 4))
    y2 = np.r_[-np.ones(11), 1.0]                 # two classes
    y1 = -np.ones(12)                             # its neighbour: the +1 flipped, one class
    fits = {}
    for name, lab in (("two", y2), ("one", y1), ("plus", np.ones(12))):
        for fn, kw in ((S.dp_frank_wolfe, {"eps": 1.0, "delta": 1e-5}),
                       (S.rnm_screen, OK), (S.adp_screen, dict(OK, screen_every=5))):
            fits[name, fn.__name__] = fn(Xl, lab, 1.0, 5, loss="logistic", random_state=0, **kw)
    # {−1, +1} ↦ {0, 1} whatever the counts: all −1 gives the same run as all 0
    ref = S.dp_frank_wolfe(Xl, np.zeros(12), 1.0, 5, eps=1.0, delta=1e-5, loss="logistic",
                           random_state=0)
    np.testing.assert_array_equal(fits["one", "dp_frank_wolfe"].coef_, ref.coef_)
    from mipdp.screening.losses import LogisticLoss
    np.testing.assert_array_equal(LogisticLoss().check_targets(y1, None), np.zeros(12))
    np.testing.assert_array_equal(LogisticLoss().check_targets(np.ones(3), None), np.ones(3))
    np.testing.assert_array_equal(LogisticLoss().check_targets(np.array([0.0, 0.5]), None),
                                  [0.0, 0.5])
    with pytest.raises(ValueError, match="y"):            # outside both domains
        LogisticLoss().check_targets(np.array([-1.0, 0.5]), None)
