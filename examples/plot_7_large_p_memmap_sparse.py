"""
Large p: memmap and sparse input with a private pre-screen
==========================================================

:func:`mipdp.private_bss` takes ``X`` as a numpy array, a :class:`numpy.memmap`, a scipy
sparse matrix or a dask array, and never densifies or copies it whole: clipping is
applied lazily, chunk by chunk.  When ``p`` is large, a private pre-screen first
chooses ``k`` candidate columns with a fraction ``f`` of ε, and the exact selection runs
on those with the rest: ``prescreen=("dp_sis", k, f)``.
"""

# %%
# A sparse design with p = 20 000
# -------------------------------
# A sparse matrix whose entries lie in ``[−1, 1]`` by construction (so ``b_x = 1`` is a
# public bound): most columns are rare (1 % non-zeros), and the target depends on three
# common ones (half the rows each), like frequent words in a bag-of-words matrix.
import os
import tempfile
import time
import warnings

import numpy as np
import scipy.sparse as sp

from mipdp import ClippingWarning, private_bss
from mipdp.datasets import make_bss_regression

rng = np.random.default_rng(0)
n, p = 2000, 20_000
truth = np.array([10, 2024, 15000])
rare = sp.random(n, p, density=0.01, format="csc", random_state=rng,
                 data_rvs=lambda size: rng.uniform(-1, 1, size))
keep = np.ones(p)
keep[truth] = 0.0
common = rng.choice([-1.0, 0.0, 1.0], size=(n, 3), p=[0.25, 0.5, 0.25])
to_columns = sp.csr_matrix((np.ones(3), (np.arange(3), truth)), shape=(3, p))
placed = sp.csc_matrix(common) @ to_columns          # the common columns, at ``truth``
X = (rare @ sp.diags(keep) + placed).tocsc()
y = common @ np.ones(3) + 0.5 * rng.standard_normal(n)
print(f"X: {X.shape}, {X.nnz} stored values ({X.data.nbytes / 2**20:.1f} MiB); "
      f"true support {truth}")

# %%
# The pre-screen spends ``f = 0.6`` of ε on choosing 20 candidates by DP-SIS (a private
# top-k of ``|x_jᵀ y|``); the exponential mechanism over all supports of those 20 columns
# spends the other 0.4.  ``y`` is bounded by ``3`` here: its three terms are at most 1
# each, and the rare larger noise values are clipped.
t0 = time.perf_counter()
res = private_bss(X, y, s=3, eps=1.0, bounds=(1.0, 3.0),
                  prescreen=("dp_sis", 20, 0.6), random_state=0)
print(f"released {res.support} in {time.perf_counter() - t0:.1f} s")
print(res.guarantee)
screened = res.info["prescreen"]["columns"]     # part of the release: private
print("the 20 screened columns keep the truth:", set(truth) <= set(screened))
lo, hi = res.probability_bounds(truth)
print(f"P(truth | the screened columns) in [{lo:.3f}, {hi:.3f}]   (not private)")
for part in res.guarantee.leaves():
    print("  part:", part.epsilon, "-", part.mechanism)

# %%
# An out-of-core ``X``: a memmap
# ------------------------------
# A ``.npy`` file opened with ``mmap_mode="r"`` is read in tiles and never loaded whole.
# Here a small float32 file stands in for yours.
warnings.simplefilter("ignore", ClippingWarning)   # this design clips at 0.5 on purpose
X_small, y_small, truth_small = make_bss_regression(n=2000, p=2000, s=3, random_state=0)
path = os.path.join(tempfile.mkdtemp(), "X.npy")
np.save(path, X_small.astype(np.float32))
X_mm = np.load(path, mmap_mode="r")
print(type(X_mm).__name__, X_mm.dtype, X_mm.shape)

t0 = time.perf_counter()
res_mm = private_bss(X_mm, y_small, s=3, eps=1.0, bounds=(0.5, 0.5),
                     prescreen=("dp_sis", 20, 0.6), random_state=0)
print(f"released {res_mm.support} (truth {truth_small}) "
      f"in {time.perf_counter() - t0:.1f} s")
print("epsilon spent:", res_mm.epsilon)
