"""
Spending a privacy budget with an accountant
============================================

Every call of :func:`mipdp.private_bss`, every ``fit`` of
:class:`mipdp.PrivateBestSubsetSelector` and every
:func:`mipdp.private_coefficients` is a release with its own ε, and releases on the
same rows add up.  A :class:`mipdp.BudgetAccountant` records their guarantees and
refuses, **before the data is read**, a release that would exceed its budget.
"""

# %%
# An explicit accountant
# ----------------------
# Pass ``accountant=`` to each call.  Here the budget is ε = 3 and we try four releases
# of ε = 1 each: the fourth is refused with :class:`mipdp.BudgetError` and nothing is
# computed for it.
import warnings

from sklearn.linear_model import LinearRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline

from mipdp import (
    BudgetAccountant,
    BudgetError,
    ClippingWarning,
    PrivateBestSubsetSelector,
    private_bss,
    private_coefficients,
)
from mipdp.datasets import make_bss_regression

warnings.simplefilter("ignore", ClippingWarning)   # the design clips at 0.5 on purpose

X, y, truth = make_bss_regression(n=1000, p=20, s=3, random_state=0)

acc = BudgetAccountant(epsilon=3.0)
print("before:", acc.total())
for s in (1, 2, 3, 4):
    try:
        res = private_bss(X, y, s, 1.0, bounds=(0.5, 0.5), random_state=s, accountant=acc)
        print(f"s = {s}: released {res.support}")
    except BudgetError as exc:
        print(f"s = {s}: refused -- {exc}")
print("spent:", acc.total().epsilon, "of", acc.epsilon, "in", len(acc.spent), "releases")

# %%
# A selection and its coefficients
# --------------------------------
# The support and the coefficients fitted on it are two releases: the pair costs the
# selection's ε plus the fit's.  The accountant composes both.
acc = BudgetAccountant(epsilon=2.0)
res = private_bss(X, y, s=3, eps=1.0, bounds=(0.5, 0.5), random_state=0, accountant=acc)
coef = private_coefficients(X, y, res.support, 1.0, bounds=(0.5, 0.5), random_state=0,
                            accountant=acc)
print("support:", res.support, " private coefficients:", coef.coef.round(3))
print(acc.total())

# %%
# The default accountant: ``with BudgetAccountant(...)``
# ------------------------------------------------------
# Inside a ``with`` block every call without ``accountant=`` is recorded by the block's
# accountant, including fits made by scikit-learn code.  A grid search over ``s`` with
# 3-fold cross-validation makes 3 × 3 fits plus a refit; with a budget of ε = 5 it
# stops at the sixth fit.  (The choice of the best grid point from held-out scores is a
# further release that is *not* private: prefer fixing ``s`` from domain knowledge.)
# Run such searches with ``n_jobs=1``: the default accountant belongs to the thread
# that entered the block, and a fit elsewhere raises
# :class:`mipdp.AccountantNotVisibleError` rather than release uncounted.
pipe = make_pipeline(PrivateBestSubsetSelector(eps=1.0, bounds=(0.5, 0.5), random_state=0),
                     LinearRegression())
search = GridSearchCV(pipe, {"privatebestsubsetselector__s": [1, 2, 3]}, cv=3, n_jobs=1,
                      error_score="raise")
with BudgetAccountant(epsilon=5.0) as budget:
    try:
        search.fit(X, y)
    except BudgetError as exc:
        print("grid search stopped:", exc)
print(f"{len(budget.spent)} fits recorded, total {budget.total().epsilon:g}-DP")

# %%
# A ledger shared by processes
# ----------------------------
# ``BudgetAccountant(..., path=...)`` keeps the budget and its history in a SQLite
# file: every thread and process that opens the same path (joblib or multiprocessing
# workers, another Python program) checks and spends the *same* budget, atomically.
# Here a second opener, as another program would, finds the budget and the records;
# pass ``accountant=ledger`` to calls made in worker processes (it pickles as its path).
import os
import tempfile

path = os.path.join(tempfile.mkdtemp(), "ledger.sqlite")
ledger = BudgetAccountant(epsilon=2.0, path=path)
private_bss(X, y, 3, 1.0, bounds=(0.5, 0.5), random_state=0, accountant=ledger)
other = BudgetAccountant.open(path)          # e.g. in another program, later
print("remaining:", other.remaining())
for row in other.history():
    print(row["id"], row["method"], row["epsilon"], row["neighbour"], row["status"])
