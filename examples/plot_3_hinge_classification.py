"""
Sparse classification with the hinge loss
==========================================

With ``loss="hinge"`` the support objective is the ridge-regularised hinge loss of a
linear classifier on ``s`` features.  :func:`mipdp.private_bss` takes ``±1`` labels;
the scikit-learn selector :class:`mipdp.PrivateBestSubsetSelector` takes any two
labels (0/1, strings) and maps them itself.
"""

# %%
# Labels from a sparse logistic model
# -----------------------------------
import warnings

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline

from mipdp import ClippingWarning, PrivateBestSubsetSelector, private_bss
from mipdp.datasets import make_bss_classification

warnings.simplefilter("ignore", ClippingWarning)   # the design clips at 0.5 on purpose

X, y, truth = make_bss_classification(n=1500, p=20, s=3, random_state=0)
print("labels:", np.unique(y), " true support:", truth)

# %%
# A private release
# -----------------
# The hinge loss needs no bound on the labels: its sensitivity is ``(1 + b_x r √s)/n``,
# so ``b_y`` is ``None``.
res = private_bss(X, y, s=3, eps=1.0, loss="hinge", bounds=(0.5, None), random_state=0)
print("released support:", res.support)
print(res.guarantee)
lo, hi = res.probability_bounds(truth)
print(f"P(one draw = true support) in [{lo:.3f}, {hi:.3f}]   (not private)")

# %%
# String labels through the selector
# ----------------------------------
# In a pipeline the selector releases the support privately; the classifier fitted on the
# selected columns afterwards is **not** private (see
# :func:`mipdp.private_coefficients` for private coefficients of least squares).
labels = np.where(y > 0, "spam", "ham")
X_train, X_test, y_train, y_test = train_test_split(X, labels, random_state=0)
pipe = make_pipeline(
    PrivateBestSubsetSelector(s=3, eps=1.0, loss="hinge", bounds=(0.5, None),
                              random_state=0),
    LogisticRegression())
pipe.fit(X_train, y_train)
selector = pipe[0]
print("classes:", selector.classes_, " support:", selector.support_)
print("held-out accuracy of the (non-private) classifier:",
      round(pipe.score(X_test, y_test), 3))
