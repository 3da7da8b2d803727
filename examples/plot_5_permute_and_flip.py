"""
Permute-and-flip against the exponential mechanism
==================================================

``method="permute_and_flip"`` releases ``argmax_S −εL(S)/(2Δ) + E_S`` with ``E_S``
i.i.d. standard exponential noise over all ``C(p, s)`` supports (report-noisy-max with
exponential noise, equivalent to permute-and-flip).  It has the same pure ε-DP
guarantee as the default exponential mechanism (``method="exponential"``), is never worse
in expected score, and can be up to twice as good.  Both are sampled exactly, and both
know their law: on a small problem :meth:`~mipdp.PrivateBSSResult.probability` gives the
exact probability that one draw is a given support.
"""

# %%
# The same data, both mechanisms
# ------------------------------
import warnings

import matplotlib.pyplot as plt

from mipdp import ClippingWarning, private_bss
from mipdp.datasets import make_bss_regression

warnings.simplefilter("ignore", ClippingWarning)   # the design clips at 0.5 on purpose

X, y, truth = make_bss_regression(n=300, p=20, s=3, random_state=0)
for method in ("exponential", "permute_and_flip"):
    res = private_bss(X, y, s=3, eps=1.0, bounds=(0.5, 0.5), method=method,
                      random_state=0)
    print(f"{method:17s} released {res.support}; "
          f"P(truth) = {res.probability(truth):.3f}   (not private)")
    print(f"{'':17s} {res.guarantee}")

# %%
# The probability of the truth as ``n`` grows
# -------------------------------------------
# Both probabilities are exact here (``C(20, 3) = 1140`` supports, every one evaluated).
# Permute-and-flip puts more mass on the best supports at every ``n``.
ns = [150, 200, 300, 400, 600]
p_em, p_pf = [], []
for n in ns:
    Xn, yn, truth_n = make_bss_regression(n=n, p=20, s=3, random_state=0)
    for method, out in (("exponential", p_em), ("permute_and_flip", p_pf)):
        res = private_bss(Xn, yn, s=3, eps=1.0, bounds=(0.5, 0.5), method=method,
                          random_state=0)
        out.append(res.probability(truth_n))
    print(f"n = {n:4d}: exponential {p_em[-1]:.3f}, permute-and-flip {p_pf[-1]:.3f}")

fig, ax = plt.subplots(figsize=(5, 3.2))
ax.plot(ns, p_em, "o-", label="exponential mechanism")
ax.plot(ns, p_pf, "s-", label="permute-and-flip")
ax.set_xlabel("n (rows)")
ax.set_ylabel("P(one draw = true support)")
ax.set_ylim(0, 1)
ax.legend()
ax.set_title("p = 20, s = 3, ε = 1")
fig.tight_layout()
plt.show()
