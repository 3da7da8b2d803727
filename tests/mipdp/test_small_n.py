"""Issue 28 (5): the fewest rows each entry point accepts is a data-free convention.

Under add/remove neighbours ``n`` is private, so no entry point may refuse ``n = 1`` where
``n = 2`` runs (``MIN_SAMPLES_ADD_REMOVE = 1``); under replace-one ``n`` is public (both
data sets of a pair have it) and ``n < 2`` is refused before anything is released
(``MIN_SAMPLES_REPLACE_ONE = 2``).  docs/privacy.md, "The number of rows".
"""

import numpy as np
import pytest

from mipdp import PrivateBestSubsetSelector, private_bss
from mipdp._validation import MIN_SAMPLES_ADD_REMOVE, MIN_SAMPLES_REPLACE_ONE
from mipdp.coefficients import private_coefficients
from mipdp.comparators import dp_kendall, dp_sis, mcmc, noisy_iht, two_stage

P = 5


def _rows(n, seed=0, hinge=False):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, P))
    y = np.where(rng.uniform(size=n) < 0.5, -1.0, 1.0) if hinge else rng.uniform(-1, 1, n)
    return X, y


ENTRY_POINTS = {
    "private_bss": lambda X, y, nb: private_bss(X, y, 2, 1.0, bounds=(1.0, 1.0),
                                                neighbours=nb, random_state=0),
    "private_bss_hinge": lambda X, y, nb: private_bss(X, np.where(y < 0, -1.0, 1.0), 2, 1.0,
                                                      bounds=(1.0, 1.0), loss="hinge",
                                                      neighbours=nb, random_state=0),
    "private_bss_private_ranges": lambda X, y, nb: private_bss(
        X, y, 2, 1.0, bounds="private", neighbours=nb, random_state=0),
    "selector": lambda X, y, nb: PrivateBestSubsetSelector(
        s=2, eps=1.0, bounds=(1.0, 1.0), neighbours=nb, random_state=0).fit(X, y),
    "private_coefficients": lambda X, y, nb: private_coefficients(
        X, y, [0, 1], 1.0, bounds=(1.0, 1.0), neighbours=nb, random_state=0),
    "dp_sis": lambda X, y, nb: dp_sis(X, y, 2, 1.0, bounds=(1.0, 1.0), neighbours=nb,
                                      random_state=0),
    "dp_kendall": lambda X, y, nb: dp_kendall(X, y, 2, 1.0, neighbours=nb, random_state=0),
    "two_stage": lambda X, y, nb: two_stage(X, y, 2, 1.0, n_blocks=3, neighbours=nb,
                                            random_state=0),
    "noisy_iht": lambda X, y, nb: noisy_iht(
        X, y, 2, 1.0, bounds=(1.0, 1.0), neighbours=nb, n_iter=5, random_state=0,
        n_public=10 if nb == "add_remove" else None),
    "mcmc": lambda X, y, nb: mcmc(X, y, 2, 1.0, bounds=(1.0, 1.0), neighbours=nb,
                                  random_state=0, n_iter=20),
}


def test_the_conventions():
    assert (MIN_SAMPLES_ADD_REMOVE, MIN_SAMPLES_REPLACE_ONE) == (1, 2)


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_add_remove_runs_at_n_1_as_at_n_2(entry):
    """Before the fix n = 1 raised 'need at least 2 samples' where n = 2 ran."""
    for n in (1, 2):
        X, y = _rows(n, hinge="hinge" in entry)
        ENTRY_POINTS[entry](X, y, "add_remove")


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_replace_one_refuses_n_1(entry):
    """n is public under replace-one: refusing n < 2 depends on no row."""
    X, y = _rows(1, hinge="hinge" in entry)
    with pytest.raises(ValueError, match="at least 2|minimum of 2"):
        ENTRY_POINTS[entry](X, y, "replace_one")
