"""Synthetic data of the papers (docs/math.md §7), generated from a numpy Generator."""

from __future__ import annotations

import numpy as np

from ._validation import check_positive, check_random_state, check_sparsity

__all__ = ["DESIGNS", "make_bss_regression", "make_bss_classification", "make_sis_regression",
           "make_screening_regression"]


def _ar1_design(n: int, p: int, rho: float, rng: np.random.Generator) -> np.ndarray:
    """Rows ``~ N(0, Σ)`` with ``Σ_ij = ρ^|i-j|`` by an AR(1) recursion over columns."""
    X = rng.standard_normal((n, p))
    c = np.sqrt(1.0 - rho * rho)
    for j in range(1, p):
        X[:, j] = rho * X[:, j - 1] + c * X[:, j]
    return X


#: synthetic designs of :func:`make_bss_regression` / :func:`make_bss_classification`
DESIGNS = ("seed002", "cancel")


def _seed002_signal(n, p, s, rho, rng):
    if not 0 <= rho < 1:
        raise ValueError(f"rho: must be in [0, 1), got {rho}")
    if 2 * s - 1 >= p:
        raise ValueError(f"s: the true support 1, 3, ..., 2s-1 needs p > 2s - 1, got p={p}, s={s}")
    X = _ar1_design(n, p, rho, rng)
    support = np.arange(1, 2 * s, 2)
    beta = np.zeros(p)
    beta[support] = 1.0 / np.sqrt(s)
    return X, X @ beta, support, beta


def _cancel_signal(n, p, s, rho, rng):
    """Sign cancellation: ``x_3 = ρ x_1 + √(1-ρ²) z``, ``β_1 = b``, ``β_3 = -ρ b``.

    Every other column is independent ``N(0, 1)``; the true support is ``1, 3, ..., 2s-1``
    with ``β = b = 1/√s`` except ``β_3 = -ρ b``.  Then ``cov(x_3, y) = ρ b - ρ b = 0``: the
    true feature 3 has *no* marginal correlation with ``y`` (and ``x_1``'s drops to
    ``(1 - ρ²) b``), so marginal screening ranks it among the null features at every
    ``n``, while the joint fit needs it (its unique variance is ``1 - ρ²``).
    """
    if not 0 < rho < 1:
        raise ValueError(f"rho: the cancelling pair needs a correlation in (0, 1), got {rho}")
    if s < 2:
        raise ValueError(f"s: the cancellation design needs s >= 2, got {s}")
    if 2 * s - 1 >= p:
        raise ValueError(f"s: the true support 1, 3, ..., 2s-1 needs p > 2s - 1, got p={p}, s={s}")
    X = rng.standard_normal((n, p))
    X[:, 3] = rho * X[:, 1] + np.sqrt(1.0 - rho * rho) * X[:, 3]
    support = np.arange(1, 2 * s, 2)
    beta = np.zeros(p)
    beta[support] = 1.0 / np.sqrt(s)
    beta[3] = -rho / np.sqrt(s)
    return X, X @ beta, support, beta


def _signal(design, n, p, s, rho, rng):
    if design == "seed002":
        return _seed002_signal(n, p, s, rho, rng)
    if design == "cancel":
        return _cancel_signal(n, p, s, rho, rng)
    raise ValueError(f"design: must be one of {list(DESIGNS)}, got {design!r}")


def make_bss_regression(n: int = 3000, p: int = 100, s: int = 5, *, rho: float = 0.1,
                        snr: float = 5.0, design: str = "seed002", random_state=None):
    """The regression design of Prastakos et al. (2025), or a design where marginal screening fails.

    ``design="seed002"``: rows ``~ N(0, Σ)``, ``Σ_ij = ρ^|i-j|``; ``β* = 1/√s`` at indices
    ``1, 3, ..., 2s-1``.  ``design="cancel"`` (sign cancellation): independent columns
    except ``corr(x_1, x_3) = ρ``, ``β* = 1/√s`` at ``1, 3, ..., 2s-1`` except
    ``β*_3 = -ρ/√s``, so that ``x_3`` has zero marginal correlation with ``y``.  Both:
    Gaussian noise scaled so that ``||Xβ*|| / ||noise|| = √SNR``.

    Returns
    -------
    X : ndarray (n, p)
    y : ndarray (n,)
    support : ndarray (s,)
        The true support.
    """
    s = check_sparsity(s, p)
    snr = check_positive(snr, "snr")
    rng = check_random_state(random_state)
    X, signal, support, _ = _signal(design, n, p, s, rho, rng)
    noise = rng.standard_normal(n)
    noise *= np.linalg.norm(signal) / (np.sqrt(snr) * np.linalg.norm(noise))
    return X, signal + noise, support


def make_bss_classification(n: int = 3000, p: int = 100, s: int = 5, *, rho: float = 0.1,
                            snr: float = 5.0, design: str = "seed002", random_state=None):
    """Prastakos et al.'s (2025) design: ``y = ±1`` with ``P(y = 1) = sigmoid(Xβ* + noise)``.

    ``design`` as in :func:`make_bss_regression`.
    """
    s = check_sparsity(s, p)
    snr = check_positive(snr, "snr")
    rng = check_random_state(random_state)
    X, signal, support, _ = _signal(design, n, p, s, rho, rng)
    noise = rng.standard_normal(n)
    noise *= np.linalg.norm(signal) / (np.sqrt(snr) * np.linalg.norm(noise))
    prob = 1.0 / (1.0 + np.exp(-(signal + noise)))
    y = np.where(rng.random(n) < prob, 1.0, -1.0)
    return X, y, support


def make_sis_regression(n: int = 100, d: int = 2000, k: int = 8, *, random_state=None):
    """Swope et al.'s (2024) design: ``X ~ N(0, I)``, ``k`` random non-zeros ``(-1)^u (a + |z|)``.

    ``u ~ Bernoulli(0.4)``, ``a = 4 log n / √n``, noise variance 1.5.
    """
    rng = check_random_state(random_state)
    X = rng.standard_normal((n, d))
    support = np.sort(rng.choice(d, size=k, replace=False))
    u = rng.random(k) < 0.4
    a = 4.0 * np.log(n) / np.sqrt(n)
    beta = np.zeros(d)
    beta[support] = np.where(u, -1.0, 1.0) * (a + np.abs(rng.standard_normal(k)))
    y = X @ beta + np.sqrt(1.5) * rng.standard_normal(n)
    return X, y, support


def make_screening_regression(n: int = 3000, d: int = 600, n_pos: int = 35, n_neg: int = 35, *,
                              noise: float = 0.1, random_state=None):
    """Khanna et al.'s (2023, 2025) design: ``N(0,1)`` rows scaled to ``||x_i||_∞ <= 1``; ``n_pos``
    coefficients +1 and ``n_neg`` −1."""
    rng = check_random_state(random_state)
    X = rng.standard_normal((n, d))
    X /= np.max(np.abs(X), axis=1, keepdims=True)
    idx = rng.choice(d, size=n_pos + n_neg, replace=False)
    beta = np.zeros(d)
    beta[idx[:n_pos]], beta[idx[n_pos:]] = 1.0, -1.0
    y = X @ beta + noise * rng.standard_normal(n)
    return X, y, np.sort(idx)
