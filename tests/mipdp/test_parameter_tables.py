"""One parameter table per public function: same bad value -> same exception, named argument.

The data passed is an object that raises on access, so every check below also shows that
parameters are validated before the data is read.
"""

import numpy as np
import pytest

from mipdp import InvalidParameterError, private_bss, private_coefficients
from mipdp.comparators import dp_kendall, dp_sis, mcmc, prescreen, two_stage
from mipdp.losses import LeastSquares, get_loss
from mipdp.mechanisms.topk import canonical_lipschitz_topk, gumbel_peeling_topk, laplace_topk
from mipdp.screening import adp_screen, dp_frank_wolfe, rnm_screen

from .test_accounting import Untouchable

D = Untouchable()
SCORES = np.arange(6.0)

#: name -> (function, positional arguments, keyword arguments)
PUBLIC = {
    "private_bss": (private_bss, (D, D, 2, 1.0), {"bounds": (0.5, 0.5)}),
    "private_coefficients": (private_coefficients, (D, D, [0, 1], 1.0), {"bounds": (0.5, 0.5)}),
    "dp_sis": (dp_sis, (D, D, 2, 1.0), {"bounds": (1.0, 1.0)}),
    "dp_kendall": (dp_kendall, (D, D, 2, 1.0), {}),
    "two_stage": (two_stage, (D, D, 2, 1.0), {}),
    "mcmc": (mcmc, (D, D, 2, 1.0), {"bounds": (1.0, 1.0)}),
    "prescreen": (prescreen, ("dp_sis", D, D, 2, 1.0), {"bounds": (1.0, 1.0)}),
    "dp_frank_wolfe": (dp_frank_wolfe, (D, D, 1.0), {"eps": 1.0, "delta": 1e-5}),
    "adp_screen": (adp_screen, (D, D, 1.0), {"delta_opt": 1e-5, "delta_screen": 1e-5}),
    "rnm_screen": (rnm_screen, (D, D, 1.0), {"delta_opt": 1e-5, "delta_screen": 1e-5}),
    "canonical_lipschitz_topk": (canonical_lipschitz_topk, (SCORES, 2, 1.0, 1.0, 0), {}),
    "gumbel_peeling_topk": (gumbel_peeling_topk, (SCORES, 2, 1.0, 1.0, 0), {}),
    "laplace_topk": (laplace_topk, (SCORES, 2, 1.0, 1.0, 0), {}),
}

#: shared parameter -> bad values (each must be refused by every function that has it)
BAD = {
    "n_draws": [1.5, 0, "2", True],
    "eps": [-1.0, 0.0, float("nan"), "1"],
    "random_state": ["seed", -1, 1.5],
    "rng": ["seed", -1],
    "neighbours": ["bounded", "unbounded", 3, None],
    "n_iter": [0, 1.5, -3],
    "bounds": [(-1.0, 1.0), (0.0, 1.0), "big", (1.0, 2.0, 3.0)],
    "k": [0, 1.5],
    "s": [0, 2.5],
    "accountant": ["budget", 3.0],
    "topk": ["best"],
    "delta": [0.0, 1.0, -1e-6],
    "l1_radius": [0.0, -1.0],
    "time_limit": [0.0, -5.0, "1"],
    "gamma": [1.5, -0.1],
}


def _bind(fn, args, kwargs):
    import inspect
    sig = inspect.signature(fn)
    return sig.bind_partial(*args, **kwargs).arguments, sig.parameters


CASES = [(fname, param, value) for fname, (fn, a, k) in PUBLIC.items()
         for param, values in BAD.items() if param in __import__("inspect").signature(fn).parameters
         for value in values]


@pytest.mark.parametrize("fname,param,value", CASES)
def test_same_bad_value_same_exception(fname, param, value):
    fn, args, kwargs = PUBLIC[fname]
    bound = dict(_bind(fn, args, kwargs)[0])
    bound[param] = value
    with pytest.raises(InvalidParameterError, match=f"'{param}' parameter of {fn.__name__}"):
        fn(**bound)


def test_every_public_function_has_a_table():
    for fname, (fn, _, _) in PUBLIC.items():
        table = fn._parameter_constraints
        import inspect
        assert set(table) <= set(inspect.signature(fn).parameters), fname
        for shared in ("n_draws", "eps", "random_state", "neighbours", "accountant", "n_iter"):
            if shared in inspect.signature(fn).parameters:
                assert shared in table, (fname, shared)


def test_message_shape_and_both_exception_types():
    with pytest.raises(ValueError) as e1:
        dp_sis(D, D, 2, 1.0, bounds=(1.0, 1.0), n_draws=1.5)
    with pytest.raises(TypeError) as e2:
        private_bss(D, D, 2, 1.0, bounds=(0.5, 0.5), n_draws=1.5)
    assert str(e1.value) == ("The 'n_draws' parameter of dp_sis must be an int in the range "
                             "[1, inf). Got 1.5 instead.")
    assert str(e2.value).replace("private_bss", "dp_sis") == str(e1.value)


def test_n_iter_range_is_the_same_everywhere():
    for fn, args, kw in [(mcmc, (D, D, 2, 1.0), {"bounds": (1.0, 1.0)}),
                         (dp_frank_wolfe, (D, D, 1.0), {"delta": 1e-5})]:
        with pytest.raises(InvalidParameterError, match=r"'n_iter'.*\[1, inf\)"):
            fn(*args, n_iter=0, **kw)


def test_get_loss_does_not_drop_ridge():
    inst = LeastSquares(ridge=5.0, radius=1.0)
    assert get_loss(inst) is inst and get_loss(inst, ridge=5.0) is inst
    with pytest.raises(InvalidParameterError, match="'ridge' parameter of get_loss"):
        get_loss(inst, ridge=999.0)
    with pytest.raises(InvalidParameterError, match="'radius'"):
        get_loss(inst, radius=2.0)
    assert get_loss("least_squares", ridge=999.0).ridge == 999.0
    # a value the instance leaves to the default rule is filled in, not a conflict
    half = LeastSquares(ridge=5.0)
    filled = get_loss(half, radius=2.0)
    assert (filled.ridge, filled.radius) == (5.0, 2.0) and half.radius is None
    with pytest.raises(InvalidParameterError, match="'ridge'"):
        private_bss(D, D, 2, 1.0, bounds=(0.5, 0.5), loss=inst, ridge=999.0)


def test_random_state_accepts_legacy_randomstate():
    from mipdp._validation import check_random_state
    a = check_random_state(np.random.RandomState(0)).integers(1 << 30)
    b = check_random_state(np.random.RandomState(0)).integers(1 << 30)
    assert a == b


@pytest.mark.parametrize("options, match", [
    ({"tol": 0.5}, r"enumeration_options\['tol'\] .*not be certified"),
    ({"cutoff_margin": 1e-9}, r"enumeration_options\['cutoff_margin'\] .*not be certified"),
    ({"no_such_option": 1}, "unknown option 'no_such_option'"),
    ({"time_limit": 5.0}, "pass time_limit= to private_bss itself"),
    ({"backend": "gurobi"}, "pass backend= to private_bss itself"),
    ({"scale": 1.0}, "sensitivity"),
    ({"explicit_max": -1}, r"enumeration_options\['explicit_max'\]"),
    ({"exhaustive_max": 1.5}, r"enumeration_options\['exhaustive_max'\]"),
    ({"dominance": "yes"}, r"enumeration_options\['dominance'\]"),
    ({"search_gap": 1.0}, r"enumeration_options\['search_gap'\]"),
    ({"progress": 3}, r"enumeration_options\['progress'\]"),
])
def test_enumeration_options_checked_before_the_data(options, match):
    """Issue 20 (10): keys and values of enumeration_options are checked before the data is
    read; an option that would loosen a certificate is refused (no result claims privacy
    with it)."""
    with pytest.raises(InvalidParameterError, match=match):
        private_bss(D, D, 2, 1.0, bounds=(0.5, 0.5), enumeration_options=options)


def test_enumeration_options_that_keep_the_certificates_run():
    from mipdp.enumeration.options import check_enumeration_options
    ok = {"tol": 1e-10, "cutoff_margin": 1e-4, "exhaustive_max": 0, "explicit_max": 0,
          "dominance": False, "search_gap": 1e-3, "n_warm_cuts": 2, "progress": print}
    assert check_enumeration_options(ok) == ok
    rng = np.random.default_rng(0)
    X, y = rng.uniform(-0.5, 0.5, (40, 8)), rng.uniform(-0.5, 0.5, 40)
    res = private_bss(X, y, 2, 1.0, bounds=(0.5, 0.5), random_state=0,
                      enumeration_options={k: v for k, v in ok.items() if k != "progress"})
    assert res.is_private
