"""Private clipping ranges: ``bounds="private"`` / ``bounds=PrivateBounds(...)``.

Without domain ranges for the columns (and the target), :func:`mipdp.private_bss` can spend
a stated fraction of ``ε`` to *estimate* them privately, map every column (and ``y``) by
the affine map of its range onto ``[−½, ½]``, and run the selection on the mapped data
with public bounds ``b_x = b_y = ½`` and the rest of ``ε``.

Mechanism (docs/privacy.md, "Private clipping ranges")
-------------------------------------------------------
For each *ranged variable* — every column of ``X`` separately (``shared=False``), or all
columns pooled into one shared range (``shared=True``), and ``y`` when the loss needs its
bound (least squares, Huber; not the hinge loss, whose labels are ``±1``) — two releases
of the exponential mechanism for quantiles over a public grid
(:mod:`mipdp.mechanisms.quantile`, utility ``−|C_D(g) − q n|``, sensitivity 1 under
replace-one and add/remove-one neighbours) give grid points ``a`` (level ``q``) and ``b``
(level ``1 − q``).  Post-processing only (no further access to the data):

    lo, hi = min(a, b), max(a, b)    (widened to the neighbouring grid points if equal)
    centre c = (lo + hi)/2,  half-width w = widen · (hi − lo)/2,
    w ← max(w, MIN_RANGE_WIDTH · max(1, |c|) / 2)           (the width floor)
    range [c − w, c + w],  x ↦ clip((x − c) / (2w), −½, ½)

No released range can collapse: its width is at least ``MIN_RANGE_WIDTH · max(1, |c|)``
(``1e−9``, relative beyond ``|c| = 1``, far above float64's resolution, so ``c ± w`` are
distinct numbers and ``1/(2w)`` is finite), and the grid's points are bounded by
``MAX_GRID_ABS`` (``1e100``), so ``c`` and ``w`` are finite.  Both are checks of public
numbers: the floor is applied to every released range whatever the data, and ``widen``,
``quantile`` and ``grid`` are validated when :class:`PrivateBounds` is built, before any
data is read.  (Without the floor, ``widen=1e−20`` collapsed the range, and whether the map
then divided ``0/0`` depended on whether one row sat exactly at ``c``.)

With ``K`` quantile releases in all (``K = 2 × (number of ranged variables)``) each gets
``ε_r / K``, ``ε_r = fraction · eps``; by basic composition the ranges are ``ε_r``-DP, and
the whole call (ranges, then the selection on the mapped data with ``(1 − fraction) eps``,
an adaptive composition) is ``eps``-DP for one draw, under the call's neighbour notion.
The ranges are part of the release (``result.info["private_ranges"]``): they are private
outputs.

Cost in ``p``
-------------
Per column, each quantile gets ``ε_r / (2(p + 1))``, and the quantile mechanism's rank error
is about ``2 (log m + t) / ε_q`` with probability ``1 − e^{−t}`` (``m`` grid points):
a rank error below 5 % of ``n`` needs ``n ε_q >= 40 (log m + 3)``, i.e. ``n >= 80 (p + 1)
(log m + 3) / ε_r`` — about ``7000 (p + 1)`` rows at ``ε_r = 0.1`` with the default grid.
One shared range for all columns costs the same ``O(1/ε_r)`` rank error at every ``p``
(the pooled count has sensitivity 1 whatever ``p``) and suits columns on a common scale
(standardised, or the same unit).  ``shared=None`` (default) chooses per-column ranges
only under replace-one neighbours (where ``n`` is public) when
``n ε_q >= AUTO_PER_COLUMN (log m + 3)``; otherwise the shared range.  Time:
``O(n p log m)`` (each entry placed on the grid once; ``O(nnz log m)`` for a sparse ``X``);
at ``p = 10⁴``, ``n = 3000`` this is well under a second
(study ``private_bounds`` of ``experiments/studies.toml``).

Memory: ``X`` is never copied whole (docs/design.md, "Memory", "Private clipping ranges").
It is validated lazily (``check_X_y(..., lazy=True)``); the grid counts are accumulated one
tile at a time (:mod:`mipdp.range_counts`; a sparse ``X``: its stored values, the implicit
zeros added analytically), which takes about ``3 · 8 p (m + 1)`` bytes per column (the
histograms, the counts and one release's log-weights and noise) or ``O(m)`` pooled, plus one
tile (about 8 MiB; ``24 nnz`` bytes for sparse input); and the mapped data is the lazy
:class:`mipdp.mapped.MappedMatrix` (:meth:`PrivateRanges.mapped`): the selection's
:class:`mipdp.data.ClippedDesign` maps each tile as it reads it (a mapped float64 copy only
when ``8 n p`` fits its copy budget, as for any input), and a sparse ``X`` becomes a sparse
matrix on ``X``'s pattern plus a rank-one term (``clip(0)`` is constant per column).  The
ranges and the release are those of the dense float64 path for the same ``random_state``.
"""

from __future__ import annotations

import logging
import math
import numbers
import time
from dataclasses import dataclass, field
from typing import cast

import numpy as np

from ._param_validation import InvalidParameterError
from .guarantee import Guarantee, Neighbour
from .mapped import ColumnMap, MappedMatrix
from .mechanisms.quantile import (
    QUANTILE_SENSITIVITY,
    grid_counts,
    private_quantile_index,
    quantile_log_probabilities,
)
from .range_counts import lazy_column_grid_counts, lazy_pooled_grid_counts

logger = logging.getLogger(__name__)

__all__ = ["PrivateBounds", "PrivateRanges", "as_private_bounds", "default_grid",
           "estimate_ranges", "ranges_log_probabilities", "ranges_guarantee", "MAPPED_BOUNDS",
           "AUTO_PER_COLUMN", "MIN_RANGE_WIDTH", "MAX_GRID_ABS", "MIN_WIDEN"]

#: the public bounds of the mapped data
MAPPED_BOUNDS = (0.5, 0.5)
#: per-column ranges (``shared=None``) when ``n ε_q >= AUTO_PER_COLUMN (log m + 3)``
AUTO_PER_COLUMN = 40.0
#: largest grid accepted
MAX_GRID = 10 ** 6
#: The floor on a released range's width, relative beyond ``|centre| = 1``: every range
#: ``[lo, hi]`` has ``hi − lo >= MIN_RANGE_WIDTH · max(1, |(lo + hi)/2|)``, whatever the
#: data (a data-free post-processing of the released grid points), so the map
#: ``(x − c)/(hi − lo)`` never divides by zero or by a denormal width.
MIN_RANGE_WIDTH = 1e-9
#: largest ``|g|`` of a grid point (keeps the centre and the widened width finite)
MAX_GRID_ABS = 1e100
#: smallest ``widen`` accepted (``(0.01, 100]``; a narrower range would clip everything)
MIN_WIDEN = 0.01


def default_grid() -> np.ndarray:
    """The default public grid: ``0`` and ``±10^{k/16}``, ``k = −48, ..., 96``.

    291 points, symmetric, from ``10⁻³`` to ``10⁶`` in steps of a factor ``10^{1/16} ≈
    1.155``: data-independent, so it may be used by the quantile mechanism.  Values whose
    relevant quantiles lie outside ``[−10⁶, 10⁶]`` or inside ``(−10⁻³, 10⁻³)`` need a
    rescaling in public units or a ``grid=``.
    """
    pos = 10.0 ** (np.arange(-48, 97) / 16.0)
    return np.concatenate([-pos[::-1], [0.0], pos])


def _check_grid(grid) -> tuple | None:
    if grid is None:
        return None
    try:
        g = np.asarray(grid, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(f"grid: expected a 1-D array of increasing numbers, got "
                                    f"{type(grid).__name__} ({exc})") from exc
    if g.ndim != 1 or g.size < 3 or g.size > MAX_GRID:
        raise InvalidParameterError(f"grid: expected a 1-D array of 3 to {MAX_GRID} numbers, "
                                    f"got shape {g.shape}")
    if not np.all(np.isfinite(g)):
        raise InvalidParameterError("grid: contains NaN or infinite values")
    if np.max(np.abs(g)) > MAX_GRID_ABS:
        raise InvalidParameterError(f"grid: every point must satisfy |g| <= {MAX_GRID_ABS:g} "
                                    "(MAX_GRID_ABS); rescale the data in public units")
    if not np.all(np.diff(g) > 0):
        raise InvalidParameterError("grid: must be strictly increasing (sorted, no repeats); "
                                    "it must also be chosen without looking at the data")
    return tuple(float(v) for v in g)


def _check_real(value, name, lo, hi, *, closed_hi=False):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise InvalidParameterError(f"{name}: expected a finite real number, got {value!r}")
    value = float(value)
    ok = lo < value and (value <= hi if closed_hi else value < hi)
    if not ok:
        raise InvalidParameterError(
            f"{name}: must lie in ({lo:g}, {hi:g}{']' if closed_hi else ')'}, got {value!r}")
    return value


@dataclass(frozen=True)
class PrivateBounds:
    """Clipping ranges estimated privately, as ``bounds=`` of :func:`mipdp.private_bss`.

    ``bounds="private"`` is ``PrivateBounds()``.  Pure DP under the call's neighbour
    notion (replace-one or add/remove-one): the quantile mechanism used has sensitivity 1
    under both (:mod:`mipdp.mechanisms.quantile`).

    Parameters
    ----------
    fraction : float in (0, 1), default 0.1
        Share of ``eps`` spent on the ranges (once, whatever ``n_draws``); the selection
        gets ``(1 − fraction) eps`` per draw.
    quantile : float in (0, 0.5), default 0.25
        Level ``q``: each range is built from the private ``q``- and ``(1 − q)``-quantiles.
        Levels near the middle are estimated far more accurately at small ``ε`` (a
        quantile near 0 or 1 is confused with the grid points beyond the data).  Whatever
        ``q``, two equal released points are widened to their grid neighbours and the
        width floor :data:`MIN_RANGE_WIDTH` holds, so no range collapses.
    widen : float in [0.01, 100], default 1.0
        The range is the quantile interval scaled about its centre by ``widen``.  The
        default maps the interquartile range onto ``[−½, ½]`` (about ``±0.67σ`` for a
        Gaussian column) and clips the rest: heavy clipping costs the selection little
        and a narrow range keeps the signal large against the bound (Prastakos et al.'s (2025) ``b =
        0.5`` does the same to standard Gaussian columns).  ``widen = 3`` (about ``±2σ``)
        dropped P(truth) from 0.97 to 0.18 at n = 2000 (study ``private_bounds`` of
        ``experiments/studies.toml``).
        Below :data:`MIN_WIDEN` (0.01) it is refused; every range is also at least
        :data:`MIN_RANGE_WIDTH` ``· max(1, |centre|)`` wide.
    grid : array-like, optional
        Public, strictly increasing candidate values (3 to 10⁶ points, ``|g| <=``
        :data:`MAX_GRID_ABS`), chosen without the data.  Default :func:`default_grid`
        (``0``, ``±10^{k/16}`` from ``10⁻³`` to ``10⁶``).
    shared : bool or None, default None
        ``True``: one range for all columns of ``X`` (pooled quantiles; accuracy
        independent of ``p``); ``False``: one range per column (each quantile gets
        ``ε_r / (2(p + 1))``); ``None``: per column only when that is accurate (replace-one
        neighbours and ``n ε_q >= AUTO_PER_COLUMN (log m + 3)``), else shared.

    Raises
    ------
    InvalidParameterError
        At construction (before any data is read), naming the argument.
    """

    fraction: float = 0.1
    quantile: float = 0.25
    widen: float = 1.0
    grid: tuple | None = field(default=None, repr=False)
    shared: bool | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "fraction", _check_real(self.fraction, "fraction", 0.0, 1.0))
        object.__setattr__(self, "quantile", _check_real(self.quantile, "quantile", 0.0, 0.5))
        widen = _check_real(self.widen, "widen", 0.0, 100.0, closed_hi=True)
        if widen < MIN_WIDEN:
            raise InvalidParameterError(
                f"widen: must lie in [{MIN_WIDEN:g}, 100] (MIN_WIDEN), got {self.widen!r}; a "
                "narrower range would clip almost every value to the range's ends")
        object.__setattr__(self, "widen", widen)
        object.__setattr__(self, "grid", _check_grid(self.grid))
        if self.shared is not None and not isinstance(self.shared, (bool, np.bool_)):
            raise InvalidParameterError(f"shared: expected True, False or None, got "
                                        f"{self.shared!r}")

    def grid_array(self) -> np.ndarray:
        """The grid as an array (the default grid when none was given)."""
        return default_grid() if self.grid is None else np.asarray(self.grid, dtype=float)

    def per_column(self, n: int, p: int, eps_ranges: float, need_y: bool,
                   neighbours: str = "replace_one") -> bool:
        """Whether the ranges are per column (``shared`` resolved; public inputs only)."""
        if self.shared is not None:
            return not bool(self.shared)
        if neighbours != "replace_one":
            return False               # n is not public under add/remove
        eps_q = eps_ranges / (2 * (p + int(need_y)))
        return n * eps_q >= AUTO_PER_COLUMN * (math.log(self.grid_array().size) + 3.0)


def as_private_bounds(bounds) -> PrivateBounds | None:
    """``bounds`` as a :class:`PrivateBounds` (``"private"`` → default); ``None`` otherwise."""
    if isinstance(bounds, PrivateBounds):
        return bounds
    if isinstance(bounds, str) and bounds == "private":
        return PrivateBounds()
    return None


def _neighbour(neighbours: str) -> Neighbour:
    return Neighbour.ADD_REMOVE if neighbours == "add_remove" else Neighbour.REPLACE_ONE


def ranges_guarantee(spec: PrivateBounds, eps_ranges: float, neighbours: str, need_y: bool,
                     *, per_column: bool | None = None, p: int | None = None) -> Guarantee:
    """The guarantee of the ranges stage: pure ``eps_ranges``-DP (basic composition).

    ``per_column``/``p`` refine the description once known (after the data's shape is).
    """
    m = len(spec.grid) if spec.grid is not None else default_grid().size
    if per_column is None:
        how = ("each column" if spec.shared is False else "all columns pooled"
               if spec.shared else "each column or all columns pooled (shared=None)")
        k_txt = ""
    else:
        how = "each column" if per_column else "all columns pooled"
        K = 2 * ((cast(int, p) if per_column else 1) + int(need_y))  # p given with per_column
        k_txt = f", {K} releases of eps_r/{K} each"
    ytxt = " and of y" if need_y else ""
    return Guarantee.pure(
        eps_ranges, _neighbour(neighbours),
        f"private clipping ranges: exponential mechanism for the {spec.quantile:g}- and "
        f"{1 - spec.quantile:g}-quantiles of {how}{ytxt} over a public grid of {m} points "
        f"(utility -|#{{x <= g}} - q n|){k_txt}, basic composition",
        sensitivity=QUANTILE_SENSITIVITY)


@dataclass
class PrivateRanges:
    """Privately estimated ranges and the affine map onto ``[−½, ½]`` (a private output).

    Attributes
    ----------
    x_range : ndarray, shape (p, 2)
        ``[lo_j, hi_j]`` of every column (all rows equal when ``shared``).
    y_range : (float, float) or None
        Range of ``y`` (``None`` when the loss does not need it).
    shared : bool
    epsilon : float
        ``ε_r`` spent on all the ranges together.
    guarantee : Guarantee
    """

    x_range: np.ndarray
    y_range: tuple | None
    shared: bool
    epsilon: float
    guarantee: Guarantee

    @staticmethod
    def _map(V, lo, hi):
        c = 0.5 * (lo + hi)
        return np.clip((V - c) / (hi - lo), -0.5, 0.5)

    def transform(self, X: np.ndarray, y: np.ndarray | None):
        """``X`` (and ``y``) mapped onto ``[−½, ½]`` by the ranges (values outside clipped).

        Dense: the whole mapped float64 matrix (``n p`` floats).  :meth:`mapped` gives the
        same matrix lazily (what the ranges stage of :mod:`mipdp.plan` uses).
        """
        Xm = self._map(np.asarray(X, float), self.x_range[:, 0][None, :],
                       self.x_range[:, 1][None, :])
        return Xm, self.transform_y(y)

    def transform_y(self, y: np.ndarray | None) -> np.ndarray | None:
        """``y`` mapped onto ``[−½, ½]`` by its range (unchanged without one)."""
        if y is None or self.y_range is None:
            return y
        return self._map(np.asarray(y, float), *self.y_range)

    def column_map(self) -> ColumnMap:
        """The per-column affine map of the ranges (:class:`mipdp.mapped.ColumnMap`)."""
        return ColumnMap(self.x_range[:, 0], self.x_range[:, 1])

    def mapped(self, X) -> MappedMatrix:
        """``X`` mapped by the ranges, lazily: a :class:`mipdp.mapped.MappedMatrix`.

        ``X`` (an array, memmap, scipy sparse matrix or dask array) is not copied; its
        entries equal those of :meth:`transform` bit for bit when they are formed.
        """
        return MappedMatrix(X, self.column_map())

    def as_info(self) -> dict:
        """The ranges as released (private outputs of the ε_r stage)."""
        return {"x_range": self.x_range.copy(), "y_range": self.y_range, "shared": self.shared,
                "epsilon": self.epsilon, "private": True}


def _ranges_from_indices(grid: np.ndarray, a, b, widen: float) -> np.ndarray:
    """Post-processing of the released grid indices into ranges ``[c − w, c + w]``."""
    a, b = np.atleast_1d(a), np.atleast_1d(b)
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    eq = lo == hi
    lo = np.where(eq, np.maximum(lo - 1, 0), lo)
    hi = np.where(eq, np.minimum(hi + 1, grid.size - 1), hi)
    glo, ghi = grid[lo], grid[hi]
    c, w = 0.5 * (glo + ghi), 0.5 * widen * (ghi - glo)
    # the width floor (data-free): c ± w are distinct and 1/(2w) finite (MIN_RANGE_WIDTH)
    w = np.maximum(w, 0.5 * MIN_RANGE_WIDTH * np.maximum(1.0, np.abs(c)))
    return np.column_stack([c - w, c + w])


def estimate_ranges(X: np.ndarray, y: np.ndarray | None, spec: PrivateBounds,
                    eps_ranges: float, rng: np.random.Generator, *,
                    neighbours: str = "replace_one") -> PrivateRanges:
    """Release the ranges of the columns of ``X`` (and of ``y`` unless ``None``).

    Pure ``eps_ranges``-DP under ``neighbours`` (module docstring): ``K`` quantile
    releases, each ``eps_ranges / K``-DP with sensitivity 1.
    """
    t0 = time.perf_counter()
    n, p = X.shape
    need_y = y is not None
    grid = spec.grid_array()
    per_col = spec.per_column(n, p, eps_ranges, need_y, neighbours)
    K = 2 * ((p if per_col else 1) + int(need_y))
    eps_q = eps_ranges / K
    q = spec.quantile
    if per_col:
        counts = lazy_column_grid_counts(X, grid)                  # (p, m)
        a = private_quantile_index(counts, n, q, eps_q, rng)
        b = private_quantile_index(counts, n, 1.0 - q, eps_q, rng)
        x_range = _ranges_from_indices(grid, a, b, spec.widen)
    else:
        counts = lazy_pooled_grid_counts(X, grid)                  # pooled, (m,)
        a = private_quantile_index(counts, n, q, eps_q, rng)
        b = private_quantile_index(counts, n, 1.0 - q, eps_q, rng)
        x_range = np.repeat(_ranges_from_indices(grid, a, b, spec.widen), p, axis=0)
    y_range = None
    if y is not None:  # need_y
        cy = grid_counts(y, grid)
        a = private_quantile_index(cy, n, q, eps_q, rng)
        b = private_quantile_index(cy, n, 1.0 - q, eps_q, rng)
        y_range = tuple(float(v) for v in _ranges_from_indices(grid, a, b, spec.widen)[0])
    g = ranges_guarantee(spec, eps_ranges, neighbours, need_y, per_column=per_col, p=p)
    logger.info("private ranges: %s, %d quantile releases of eps %.3g each, %.3f s (the "
                "time is not private)",
                "per column" if per_col else "shared", K, eps_q, time.perf_counter() - t0)
    return PrivateRanges(x_range, y_range, not per_col, float(eps_ranges), g)


def ranges_log_probabilities(X: np.ndarray, y: np.ndarray | None, spec: PrivateBounds,
                             eps_ranges: float, neighbours: str = "replace_one") -> list:
    """Exact law of the ranges stage: the log-law over the grid of each quantile release.

    In the order :func:`estimate_ranges` draws them (the ``q``-quantile of every ranged
    variable, then the ``(1 − q)``-quantile; ``y``'s two last).  The releases are
    independent, so the law of the whole stage is the product; used by the tests to check
    the stage's log-ratio on neighbouring data sets.
    """
    n, p = X.shape
    need_y = y is not None
    grid = spec.grid_array()
    per_col = spec.per_column(n, p, eps_ranges, need_y, neighbours)
    K = 2 * ((p if per_col else 1) + int(need_y))
    eps_q, q = eps_ranges / K, spec.quantile
    counts = (lazy_column_grid_counts(X, grid) if per_col
              else lazy_pooled_grid_counts(X, grid)[None, :])
    out = [quantile_log_probabilities(c, n, q, eps_q) for c in counts]
    out += [quantile_log_probabilities(c, n, 1.0 - q, eps_q) for c in counts]
    if y is not None:  # need_y
        cy = grid_counts(y, grid)
        out += [quantile_log_probabilities(cy, n, q, eps_q),
                quantile_log_probabilities(cy, n, 1.0 - q, eps_q)]
    return out
