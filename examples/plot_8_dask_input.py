"""
Dask arrays as input
====================

``X`` may be a :class:`dask.array.Array`: :func:`mipdp.private_bss` clips it lazily and
computes the column products it needs on the active dask scheduler (the local threaded
scheduler here; a ``distributed.Client`` of a cluster works the same way).  The release
follows the same law as on the in-memory array.
"""

# %%
# The same data, in memory and as a chunked dask array
# ----------------------------------------------------
import warnings

import dask
import dask.array as da
import numpy as np

from mipdp import ClippingWarning, private_bss
from mipdp.datasets import make_bss_regression

warnings.simplefilter("ignore", ClippingWarning)   # the design clips at 0.5 on purpose

X, y, truth = make_bss_regression(n=500, p=200, s=3, random_state=0)
X_dask = da.from_array(X, chunks=(125, 50))        # 4 × 4 blocks
print(X_dask)

# %%
# One release on each
# -------------------
# ``dask.config.set(scheduler="threads", num_workers=2)`` keeps this example on two local
# threads.
with dask.config.set(scheduler="threads", num_workers=2):
    res_dask = private_bss(X_dask, y, s=3, eps=1.0, bounds=(0.5, 0.5), random_state=0)
res_numpy = private_bss(X, y, s=3, eps=1.0, bounds=(0.5, 0.5), random_state=0)

print("dask :", res_dask.support, res_dask.guarantee)
print("numpy:", res_numpy.support)
print("same support:", np.array_equal(res_dask.support, res_numpy.support))

# %%
# The law is the same: so are the certified probabilities of any support (here the
# truth; these depend on the data and are **not private**).
print("P(truth), dask :", np.round(res_dask.probability_bounds(truth), 4))
print("P(truth), numpy:", np.round(res_numpy.probability_bounds(truth), 4))
