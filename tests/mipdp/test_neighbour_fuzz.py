"""Neighbour fuzz: an exception must not depend on the data where a neighbour would run.

For every public entry point (``private_bss`` over method × loss × bounds kind × pre-screen
× neighbour notion, the selector, ``private_coefficients``, every comparator and
``comparators.prescreen``, and OpenDP's ``make_private_bss``), hypothesis draws a small data
set ``D`` with extreme values (±1e300, ±1e-300, subnormals, the largest float, ties,
constant and duplicated columns, everything clipped, ``n`` at its minimum) and an
adversarial row ``z``; the neighbour ``D'`` is ``D`` with one row replaced by ``z``
(replace-one) or ``D`` with ``z`` added and ``D`` with one row removed (add/remove).  Both
calls get the same arguments and the same ``random_state``; the assertion is that either
both succeed, or both raise the same exception type with the same message up to the figures
in a clause labelled "not private" (:func:`normalise`).

Non-finite values are outside the data domain: every entry point refuses them with a public
input check (:func:`test_non_finite_input_is_refused`), so the adversarial row is always
finite (and a hinge row keeps a ±1 label).

The counts of every run (pairs run, both succeeded, both raised the same, mismatches, pairs
whose warnings differ) are written to ``neighbour_fuzz_counts.json`` under pytest's base
temporary directory (or the path in ``$MIPDP_FUZZ_COUNTS``) and printed at the end of the
module.  The slow variant (``python -m pytest tests/mipdp/test_neighbour_fuzz.py -m slow``)
runs at least 2000 neighbour pairs per entry point (docs/privacy.md, "Neighbour fuzz").

The configurations that hit the defects of issue 28 (now fixed) keep their groups, so
their pairs are still counted apart: a regression there shows under its defect's number.
"""

from __future__ import annotations

import json
import os
import re
import warnings
from collections import Counter, defaultdict
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from mipdp import PrivateBestSubsetSelector, PrivateBounds, private_bss, private_coefficients
from mipdp.comparators import dp_kendall, dp_sis, mcmc, noisy_iht, prescreen, two_stage
from mipdp.exceptions import InvalidParameterError
from mipdp.private_ranges import MAX_GRID_ABS, MIN_WIDEN
from mipdp.screening import adp_screen, dp_frank_wolfe, rnm_screen

# --------------------------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------------------------

BIG = np.finfo(float).max
#: extreme finite values the data and the adversarial rows are drawn from
VALUES = (0.0, 1e-300, -1e-300, 5e-324, -5e-324, 1e300, -1e300, BIG, -BIG, 1e160, -1e160,
          0.25, -0.25, 0.5, -0.5, np.nextafter(0.5, 1.0), 1.0, -1.0, 3.0, 1e5, -1e5)
#: the same without the magnitudes that overflow a Gram matrix of raw values (defect 1)
MODERATE = tuple(v for v in VALUES if abs(v) <= 1e100)
N_MAX = 12


@dataclass
class Case:
    """A data set, an adversarial row and where it goes."""

    X: np.ndarray
    y: np.ndarray
    zx: np.ndarray
    zy: float
    i: int       # the row replaced (replace-one) or removed (add/remove)
    pos: int     # where the row is added (add/remove)

    @property
    def n(self):
        return self.X.shape[0]

    @property
    def p(self):
        return self.X.shape[1]

    def neighbours(self, notion: str):
        """``[(name, D, D')]``: one pair under replace-one, two (added, removed) otherwise."""
        D = (self.X, self.y)
        if notion == "replace_one":
            X2, y2 = self.X.copy(), self.y.copy()
            X2[self.i], y2[self.i] = self.zx, self.zy
            return [("replace", D, (X2, y2))]
        out = [("add", D, (np.insert(self.X, self.pos, self.zx, axis=0),
                           np.insert(self.y, self.pos, self.zy)))]
        if self.n >= 3:        # n = 2 against n = 1 is issue 28 defect 5 (its own test below)
            out.append(("remove", D, (np.delete(self.X, self.i, axis=0),
                                      np.delete(self.y, self.i))))
        return out


def _values(rng, pool, size):
    return np.asarray(pool, dtype=float)[rng.integers(len(pool), size=size)]


def _matrix(kind, rng, n, p, pool):
    if kind == "pool":
        return _values(rng, pool, (n, p))
    if kind == "gauss":
        scale = rng.choice([1e-300, 1e-5, 0.4, 1e5, 1e300 if max(pool) > 1e100 else 1e50])
        return rng.normal(size=(n, p)) * scale
    if kind == "ties":
        return rng.integers(-1, 2, size=(n, p)) * 0.25
    if kind == "clipped":      # every entry beyond every bound used here
        return rng.choice([-1.0, 1.0], size=(n, p)) * rng.uniform(2e3, 1e4, size=(n, p))
    if kind == "zeros":
        return np.zeros((n, p))
    raise AssertionError(kind)


def _row(kind, rng, X, pool):
    p = X.shape[1]
    if kind == "pool":
        return _values(rng, pool, p)
    if kind == "max":
        return rng.choice([-1.0, 1.0], size=p) * max(pool)
    if kind == "tiny":
        return rng.choice([-1.0, 1.0], size=p) * 5e-324
    if kind == "zeros":
        return np.zeros(p)
    if kind == "copy":
        return X[rng.integers(X.shape[0])].copy()
    if kind == "negated":
        return -X[rng.integers(X.shape[0])]
    raise AssertionError(kind)


@st.composite
def cases(draw, *, labels=None, moderate=False, n_min=2):
    """A :class:`Case`: ``labels`` (a pair) for classification, else real targets."""
    pool = MODERATE if moderate else VALUES
    n = draw(st.integers(n_min, N_MAX))
    p = draw(st.integers(3, 6))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    X = _matrix(draw(st.sampled_from(["pool", "gauss", "ties", "clipped", "zeros"])),
                rng, n, p, pool)
    if draw(st.booleans()):
        X[:, rng.integers(p)] = rng.choice(pool)                      # constant column
    if draw(st.booleans()):
        a, b = rng.choice(p, 2, replace=False)
        X[:, a] = X[:, b]                                             # duplicated column
    if labels is not None:
        y = np.asarray(labels, float)[rng.integers(2, size=n)]
        if draw(st.booleans()):
            y[:] = labels[rng.integers(2)]                            # one class only
        zy = float(labels[rng.integers(2)])
    else:
        ykind = draw(st.sampled_from(["pool", "column", "constant", "zeros", "clipped"]))
        if ykind == "pool":
            y = _values(rng, pool, n)
        elif ykind == "column":
            y = X[:, rng.integers(p)].copy()
        elif ykind == "constant":
            y = np.full(n, rng.choice(pool))
        elif ykind == "zeros":
            y = np.zeros(n)
        else:
            y = rng.choice([-1.0, 1.0], n) * 1e4
        zy = float(rng.choice(pool))
    zx = _row(draw(st.sampled_from(["pool", "max", "tiny", "zeros", "copy", "negated"])),
              rng, X, pool)
    return Case(X, y, zx, zy, int(draw(st.integers(0, n - 1))), int(draw(st.integers(0, n))))


# --------------------------------------------------------------------------------------------
# outcomes and their comparison
# --------------------------------------------------------------------------------------------

_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?inf|nan")
_TRACEBACK_LAST = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Warning|Exit)): (.*)$")


def normalise(message: str) -> str:
    """``message`` with the figures of every clause labelled "not private" replaced by ``#``.

    A clause is a piece between ``;`` or sentence ends.  Figures elsewhere (a parameter, a
    public bound, ``n`` under replace-one) must agree between neighbours.
    """
    parts = re.split(r"(;|\.\s)", message)
    return "".join(_NUMBER.sub("#", part) if "not private" in part else part
                   for part in parts)


def _exception_key(exc: BaseException) -> tuple:
    """``(type, normalised message)``; OpenDP's wrapper reduced to the exception inside it."""
    name, msg = type(exc).__name__, str(exc)
    inner = getattr(exc, "message", None)
    if name == "OpenDPException" and isinstance(inner, str):
        for line in reversed(inner.strip().splitlines()):
            m = _TRACEBACK_LAST.match(line.strip())
            if m:
                name, msg = f"OpenDP[{m.group(1)}]", m.group(2)
                break
        else:
            msg = inner
    return name, normalise(msg)


def run(call):
    """``(outcome, warnings)``: outcome ``("ok",)`` or ``("raise", type, message)``.

    ``warnings``: the set of ``(category, message without its figures)`` issued.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            call()
            out = ("ok",)
        except Exception as exc:   # every exception is data here: compared, not raised
            out = ("raise",) + _exception_key(exc)
    return out, frozenset((w.category.__name__, _NUMBER.sub("#", str(w.message))[:70])
                          for w in caught)


#: neighbour-fuzz findings not fixed yet, by the message of the exception one side raises:
#: a group whose every mismatch matches one of them is an expected failure (xfail) rather
#: than a failure, so that any *other* mismatch still fails the run
KNOWN_FINDINGS: dict[str, str] = {}
# F2-F6 of the first slow run are fixed (regression tests at the end of the module):
# F2 hinge certification at a tiny ridge, F3 outer approximation's gap, F4 Huber
# certification at bounds 1e100, F5 HiGHS refusing a cut's row, F6 a singular Gram matrix

#: counts per entry point (and per group of an issue-28 defect marked xfail), across every
#: test of the module (written out at its end)
COUNTS: dict = defaultdict(Counter)
CONFIGS_HIT: dict = defaultdict(set)
MISMATCHES: dict = defaultdict(list)
_CONTEXT = {"key": None, "group": None}


def check_pair(config: str, call, D, D2, pair: str, args=None) -> None:
    """Run ``call`` on both data sets and record the comparison (never raises)."""
    (o1, w1), (o2, w2) = run(lambda: call(*D)), run(lambda: call(*D2))
    key, group = _CONTEXT["key"], _CONTEXT["group"]
    c = COUNTS[key]
    c["pairs"] += 1
    CONFIGS_HIT[key].add(config)
    if o1 == o2:
        c["both_ok" if o1[0] == "ok" else "both_raised_same"] += 1
        if o1[0] == "raise":
            c[f"both_raised:{o1[1]}"] += 1
    else:
        c["mismatches"] += 1
        MISMATCHES[(key, group)].append(
            {"config": config, "args": repr(args), "pair": pair, "outcome_D": o1,
             "outcome_D2": o2,
             "D": [D[0].tolist(), D[1].tolist()], "D2": [D2[0].tolist(), D2[1].tolist()]})
    if w1 != w2:
        c["warnings_differ"] += 1
        for cat, msg in sorted(w1 ^ w2):
            c[f"warnings_differ:{cat}:{msg}"] += 1


#: multiplies the slow variant's example counts (``MIPDP_FUZZ_SCALE=0.1`` for a quick look)
SLOW_SCALE = float(os.environ.get("MIPDP_FUZZ_SCALE", "1"))


def slow(n_examples: int) -> int:
    """The slow variant's example count, scaled by ``$MIPDP_FUZZ_SCALE``."""
    return max(1, int(round(n_examples * SLOW_SCALE)))


def _known(found: list) -> list:
    """The reasons of :data:`KNOWN_FINDINGS` that explain every mismatch (``[]``: not all)."""
    reasons = set()
    for f in found:
        msgs = [o[2] for o in (f["outcome_D"], f["outcome_D2"]) if o[0] == "raise"]
        hit = [r for pat, r in KNOWN_FINDINGS.items() if any(re.search(pat, m) for m in msgs)]
        if not hit:
            return []
        reasons.update(hit)
    return sorted(reasons)


def fuzz(entry: str, group: str, max_examples: int, strategy, body, defect=None) -> list:
    """Run ``body(case, draw)`` over ``max_examples`` hypothesis examples; return mismatches.

    ``defect``: the issue-28 defect the group is marked xfail for (its pairs are counted
    apart, under ``"<entry> [issue 28 defect N]"``).  :func:`conclude` asserts.
    """
    key = entry if defect is None else f"{entry} [issue 28 defect {defect}]"
    _CONTEXT.update(key=key, group=group)
    MISMATCHES.pop((key, group), None)

    @settings(max_examples=max_examples, derandomize=True, database=None, deadline=None,
              phases=[Phase.explicit, Phase.generate],
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                     HealthCheck.filter_too_much])
    @given(case=strategy, data=st.data())
    def inner(case, data):
        body(case, data.draw)

    inner()
    return [dict(f, group=group) for f in MISMATCHES.get((key, group), [])]


def conclude(found: list) -> None:
    """Fail on any mismatch; xfail when every one is a known finding (:data:`KNOWN_FINDINGS`)."""
    if found and _known(found):
        pytest.xfail(f"{len(found)} mismatch(es), all known neighbour-fuzz findings: "
                     + "; ".join(_known(found)))
    assert not found, (f"{len(found)} neighbour pair(s) where the exception depends on the "
                       "data; the first ones (data in the counts' JSON): " + "; ".join(
                           str({k: v for k, v in f.items() if k not in ("D", "D2")})
                           for f in found[:3]))


@pytest.fixture(scope="module", autouse=True)
def _write_counts(request, tmp_path_factory):
    """Write the counts of the module's run to JSON and print them (the lead's one command)."""
    yield
    if not COUNTS:
        return
    path = os.environ.get("MIPDP_FUZZ_COUNTS") or str(
        tmp_path_factory.getbasetemp() / "neighbour_fuzz_counts.json")
    report = {key: dict(sorted(c.items())) | {"configs_hit": len(CONFIGS_HIT[key])}
              for key, c in sorted(COUNTS.items())}
    mismatches = {f"{k}[{g}]": found for (k, g), found in MISMATCHES.items() if found}
    with open(path, "w") as fh:
        json.dump({"counts": report, "mismatches": mismatches}, fh, indent=1, sort_keys=True,
                  default=str)
    tr = request.config.pluginmanager.get_plugin("terminalreporter")
    if tr is not None:
        tr.write_line("")
        tr.write_line(f"neighbour fuzz counts (written to {path}):")
        for key, c in report.items():
            tr.write_line(f"  {key}: pairs {c.get('pairs', 0)}, both ok {c.get('both_ok', 0)}, "
                          f"both raised same {c.get('both_raised_same', 0)}, mismatches "
                          f"{c.get('mismatches', 0)}, warnings differ "
                          f"{c.get('warnings_differ', 0)}, configs hit {c['configs_hit']}")


# --------------------------------------------------------------------------------------------
# configurations
# --------------------------------------------------------------------------------------------

METHODS = {"exponential": {}, "permute_and_flip": {}, "top_r": {}, "mistakes": {},
           "mistakes_ptr": {"method": "mistakes", "delta": 1e-6}}
LOSSES = ("least_squares", "hinge", "huber")
PUBLIC_BOUNDS = ((0.5, 0.5), (1e-3, 1e3), (1e3, 1e-3), (1e100, 1e100))
#: "ranks" and "kendall": the two scores bounds=None chooses between (mipdp.bounds_free);
#: "kendall" is for least squares only (with another loss, or a pre-screen ranks refuse,
#: both neighbours raise the same data-free error, which the harness counts as "both
#: raised identically")
BOUNDS_KINDS = ("public", "private", "PrivateBounds", "ranks", "kendall")
CUSTOM_PRIVATE = PrivateBounds(fraction=0.3, quantile=0.1, widen=3.0, shared=False)
#: issue 28 defect 2: ranges that collapsed (widen far below the grid's spacing, a grid
#: whose widened range overflows) are now refused when PrivateBounds is built; the fuzz
#: runs the narrowest and widest settings that are still accepted
COLLAPSING_PRIVATE = (PrivateBounds(widen=MIN_WIDEN),
                      PrivateBounds(grid=(-MAX_GRID_ABS, 0.0, MAX_GRID_ABS)))
SCORES = ({}, {"ridge": 1e-8, "radius": 100.0}, {"ridge": 1e4, "radius": 1e-4})
ENUMERATION = (None, {"exhaustive_max": 0, "explicit_max": 0})



def _method_kwargs(name):
    kw = dict(METHODS[name])
    kw.setdefault("method", name)
    return kw


def _draw_bounds(draw, bkind, loss, private_spec=CUSTOM_PRIVATE):
    if bkind == "public":
        bx, by = draw(st.sampled_from(PUBLIC_BOUNDS))
        return (bx, None if loss == "hinge" else by)
    if bkind in ("private", "ranks", "kendall"):
        return bkind
    return private_spec


def _is_hinge_case(case) -> bool:
    return bool(np.all(np.isin(case.y, (-1.0, 1.0))) and case.zy in (-1.0, 1.0))


# -- private_bss and the selector --------------------------------------------------------------

def _bss_body(entry, configs, prescreen_name, neighbours, private_spec=CUSTOM_PRIVATE):
    """The body of a ``private_bss`` fuzz (``entry`` "private_bss" or "selector")."""

    def body(case, draw):
        hinge = _is_hinge_case(case)
        method, loss, bkind = draw(st.sampled_from(
            [c for c in configs if (c[1] == "hinge") == hinge]))
        p = case.p
        s = draw(st.integers(1, 2))
        if s >= p - 1 and prescreen_name is not None or s >= p:
            s = 1
        kw = _method_kwargs(method)
        kw.update(loss=loss, neighbours=neighbours, eps=draw(st.sampled_from([0.1, 1.0, 10.0])),
                  bounds=_draw_bounds(draw, bkind, loss, private_spec))
        kw.update(draw(st.sampled_from(SCORES)))
        opts = draw(st.sampled_from(ENUMERATION))
        if opts is not None:
            kw["enumeration_options"] = opts
        if prescreen_name is not None:
            kw["prescreen"] = (prescreen_name, draw(st.integers(s + 1, p - 1)), 0.3)
        seed = draw(st.integers(0, 2 ** 16))
        config = f"{method}/{loss}/{bkind}/{prescreen_name}/{neighbours}"
        if entry == "selector":
            def call(X, y):
                PrivateBestSubsetSelector(s=s, random_state=seed, **kw).fit(X, y)
        else:
            def call(X, y):
                private_bss(X, y, s, random_state=seed, **kw)
        for name, D, D2 in case.neighbours(neighbours):
            check_pair(config, call, D, D2, name, dict(kw, s=s, seed=seed))

    return body


def _run_bss(entry, prescreen_name, neighbours, moderate, defect, n_examples,
             private_spec=CUSTOM_PRIVATE, methods=tuple(METHODS), losses=LOSSES,
             bounds_kinds=BOUNDS_KINDS):
    """Half the examples on real targets, half on ±1 labels (the hinge configurations)."""
    configs = [(m, loss, b) for m in methods for loss in losses for b in bounds_kinds]
    gid = f"{entry}-{prescreen_name}-{neighbours}-{'moderate' if moderate else 'extreme'}"
    half = n_examples // 2 if "hinge" in losses else 0
    found = []
    for part, count, strategy in (("real", n_examples - half, cases(moderate=moderate)),
                                  ("hinge", half, cases(labels=(-1.0, 1.0), moderate=moderate))):
        if count:
            found += fuzz(entry, f"{gid}/{part}", count, strategy,
                          _bss_body(entry, configs, prescreen_name, neighbours, private_spec),
                          defect)
    conclude(found)


# (id, prescreen, neighbours, moderate data, issue-28 defect marked xfail)
BSS_GROUPS = [
    ("none-replace_one", None, "replace_one", False, None),
    ("none-add_remove", None, "add_remove", False, None),
    ("dp_sis", "dp_sis", "replace_one", False, None),
    ("kendall", "kendall", "replace_one", False, None),
    ("noisy_iht", "noisy_iht", "replace_one", False, None),
    ("two_stage-moderate", "two_stage", "replace_one", True, None),
    ("two_stage-extreme", "two_stage", "replace_one", False, 1),
]


def _params(groups):
    return [pytest.param(*g[1:], id=g[0]) for g in groups]


@pytest.mark.parametrize("prescreen_name, neighbours, moderate, defect", _params(BSS_GROUPS))
def test_private_bss(prescreen_name, neighbours, moderate, defect):
    _run_bss("private_bss", prescreen_name, neighbours, moderate, defect, 12)


@pytest.mark.slow
@pytest.mark.parametrize("prescreen_name, neighbours, moderate, defect", _params(BSS_GROUPS))
def test_private_bss_slow(prescreen_name, neighbours, moderate, defect):
    _run_bss("private_bss", prescreen_name, neighbours, moderate, defect, slow(380))


def test_collapsing_private_ranges_are_refused_before_the_data():
    """Issue 28 defect 2: the settings that collapsed a range raise when built."""
    for kw in ({"widen": 1e-20}, {"grid": (-1e308, 0.0, 1e308)}):
        with pytest.raises(InvalidParameterError):
            PrivateBounds(**kw)


@pytest.mark.parametrize("spec", COLLAPSING_PRIVATE, ids=["widen", "grid"])
@pytest.mark.parametrize("neighbours", ["replace_one", "add_remove"])
def test_private_bss_collapsing_ranges(spec, neighbours):
    """Issue 28 defect 2: ranges that collapse (only the ``PrivateBounds`` configurations)."""
    _run_bss("private_bss", None, neighbours, False, 2, 6, private_spec=spec,
             methods=("exponential", "top_r"), losses=("least_squares", "huber"),
             bounds_kinds=("PrivateBounds",))


SELECTOR_GROUPS = [("replace_one", None, "replace_one", False, None),
                   ("add_remove", None, "add_remove", False, None)]


@pytest.mark.parametrize("prescreen_name, neighbours, moderate, defect",
                         _params(SELECTOR_GROUPS))
def test_selector(prescreen_name, neighbours, moderate, defect):
    _run_bss("selector", prescreen_name, neighbours, moderate, defect, 8)


@pytest.mark.slow
@pytest.mark.parametrize("prescreen_name, neighbours, moderate, defect",
                         _params(SELECTOR_GROUPS))
def test_selector_slow(prescreen_name, neighbours, moderate, defect):
    _run_bss("selector", prescreen_name, neighbours, moderate, defect, slow(760))


# -- private_coefficients ----------------------------------------------------------------------

def _coef_body(neighbours):
    def body(case, draw):
        p = case.p
        k = draw(st.integers(1, 3))
        support = sorted(draw(st.lists(st.integers(0, p - 1), min_size=k, max_size=k,
                                       unique=True)))
        kw = dict(bounds=draw(st.sampled_from(PUBLIC_BOUNDS)),
                  ridge=draw(st.sampled_from([0.0, 1e-8, 120.0])),
                  radius=draw(st.sampled_from([1e-4, 1.1, 100.0])),
                  eps=draw(st.sampled_from([0.1, 1.0, 10.0])), neighbours=neighbours)
        seed = draw(st.integers(0, 2 ** 16))
        config = f"k={k}/ridge={kw['ridge']}/radius={kw['radius']}/{neighbours}"

        def call(X, y):
            private_coefficients(X, y, support, random_state=seed, **kw)

        for name, D, D2 in case.neighbours(neighbours):
            check_pair(config, call, D, D2, name, dict(kw, support=support, seed=seed))
    return body


@pytest.mark.parametrize("neighbours", ["replace_one", "add_remove"])
def test_private_coefficients(neighbours):
    conclude(fuzz("private_coefficients", neighbours, 15, cases(), _coef_body(neighbours)))


@pytest.mark.slow
@pytest.mark.parametrize("neighbours", ["replace_one", "add_remove"])
def test_private_coefficients_slow(neighbours):
    conclude(fuzz("private_coefficients", neighbours, slow(760), cases(),
                  _coef_body(neighbours)))


# -- PrivateSparseRegression / PrivateSparseClassifier.fit ------------------------------------

def _refused(exc: BaseException) -> bool:
    """A refusal of the Tukey mechanism's test is one of its (private) outputs, not an error."""
    return type(exc).__name__ == "PTRRefusedError"


def _model_routes(classifier: bool) -> list:
    routes = ["public", "private"]
    if not classifier:
        try:
            import mipdp.tukey  # noqa: F401
            routes.append("tukey")
        except ImportError:     # pragma: no cover - before the Tukey mechanism is merged
            pass
    return routes


def _model_body(neighbours, classifier):
    from mipdp import PrivateSparseClassifier, PrivateSparseRegression

    def body(case, draw):
        s = draw(st.integers(1, case.p - 1))
        route = draw(st.sampled_from(_model_routes(classifier)))
        b = draw(st.sampled_from(PUBLIC_BOUNDS))
        kw = dict(s=s, eps=draw(st.sampled_from([0.1, 1.0, 10.0])), neighbours=neighbours,
                  selection_fraction=draw(st.sampled_from([0.1, 0.5])))
        if route == "public":
            kw["bounds"] = b[0] if classifier else b
        elif route == "private":
            kw["bounds"] = "private"
        else:
            kw["bounds"] = None
        seed = draw(st.integers(0, 2 ** 16))
        config = f"{'classifier' if classifier else 'regression'}/{route}/{neighbours}"
        cls = PrivateSparseClassifier if classifier else PrivateSparseRegression

        def call(X, y):
            try:
                cls(random_state=seed, **kw).fit(X, y)
            except Exception as exc:
                if not _refused(exc):
                    raise

        for name, D, D2 in case.neighbours(neighbours):
            check_pair(config, call, D, D2, name, dict(kw, seed=seed))
    return body


@pytest.mark.parametrize("classifier", [False, True], ids=["regression", "classifier"])
@pytest.mark.parametrize("neighbours", ["replace_one", "add_remove"])
def test_private_sparse_model_fit(neighbours, classifier):
    strategy = cases(labels=(-1.0, 1.0)) if classifier else cases()
    conclude(fuzz("PrivateSparseModel.fit", f"{classifier}/{neighbours}", 8, strategy,
                  _model_body(neighbours, classifier)))


@pytest.mark.slow
@pytest.mark.parametrize("classifier", [False, True], ids=["regression", "classifier"])
@pytest.mark.parametrize("neighbours", ["replace_one", "add_remove"])
def test_private_sparse_model_fit_slow(neighbours, classifier):
    strategy = cases(labels=(-1.0, 1.0)) if classifier else cases()
    conclude(fuzz("PrivateSparseModel.fit", f"{classifier}/{neighbours}", slow(500), strategy,
                  _model_body(neighbours, classifier)))


# -- the comparators and comparators.prescreen -------------------------------------------------

TOPKS = ("canonical_lipschitz", "peeling", "laplace")
#: issue 39: the comparators' public bounds reach 1e300 (noisy IHT overflowed at 1e154:
#: X^T r was inf on the neighbour only), both large, both tiny, and mixed
COMPARATOR_BOUNDS = PUBLIC_BOUNDS + ((1e154, 1e154), (1e200, 1e200), (1e300, 1e300),
                                     (1e300, 1e-300), (1e-300, 1e300), (1e-300, 1e-300))
#: comparators computed in scaled units (issue 39): any overflow or invalid value is an
#: error there, so that an overflow on one neighbour only shows as a mismatch
STRICT_FLOATS = ("noisy_iht", "dp_sis", "mcmc")
_COMPARATORS = {"dp_sis": dp_sis, "kendall": dp_kendall, "two_stage": two_stage, "mcmc": mcmc,
                "noisy_iht": noisy_iht}


def _comparator_body(name, neighbour, n_blocks_given, via_prescreen=False):
    def body(case, draw):
        p = case.p
        k = draw(st.integers(1, p - 1))
        kw = {"eps": draw(st.sampled_from([0.1, 1.0, 10.0]))}
        if not via_prescreen:
            if name == "noisy_iht":     # the one spelling (the others keep the old one)
                kw["neighbours"] = ("replace_one" if neighbour == "replace-one"
                                    else "add_remove")
            else:
                kw["neighbour"] = neighbour
        if name in ("dp_sis", "mcmc", "noisy_iht") or via_prescreen:
            kw["bounds"] = draw(st.sampled_from(COMPARATOR_BOUNDS))
        elif name == "two_stage" and draw(st.booleans()):
            kw["bounds"] = draw(st.sampled_from(COMPARATOR_BOUNDS))
        if name == "noisy_iht":
            kw["n_iter"] = draw(st.sampled_from([1, 3]))
            kw["delta"] = draw(st.sampled_from([0.0, 1e-6]))
            kw["residual_bound"] = draw(st.sampled_from([None, 1e-3, 10.0]))
            if neighbour == "add/remove" and not via_prescreen:
                kw["n_public"] = draw(st.sampled_from([1, 10, 1000]))
        if name == "dp_sis":
            kw["gamma"] = draw(st.sampled_from([0.0, 0.5, 1.0]))
            if not via_prescreen:
                kw["topk"] = draw(st.sampled_from(TOPKS))
        if name == "two_stage":
            kw["topk"] = draw(st.sampled_from(TOPKS))
            kw["alpha"] = draw(st.sampled_from([None, 1e-3, 1.0]))
            if n_blocks_given:
                kw["n_blocks"] = draw(st.integers(1, N_MAX + 1))
        if name == "mcmc":
            kw["l1_radius"] = draw(st.sampled_from([1e-4, 1.0, 100.0]))
            kw["n_iter"] = draw(st.sampled_from([1, 20]))
        seed = draw(st.integers(0, 2 ** 16))
        config = f"{name}/{neighbour}/" + "/".join(
            f"{key}={kw[key]}" for key in ("topk", "alpha", "gamma", "l1_radius") if key in kw)
        config += "/n_blocks" if n_blocks_given else ""
        strict = {"over": "raise", "invalid": "raise"} if name in STRICT_FLOATS else {}
        if via_prescreen:
            def call(X, y):
                with np.errstate(**strict):
                    prescreen(name, X, y, k, random_state=seed, **kw)
        else:
            def call(X, y):
                with np.errstate(**strict):
                    _COMPARATORS[name](X, y, k, random_state=seed, **kw)
        notion = "replace_one" if neighbour == "replace-one" else "add_remove"
        for pname, D, D2 in case.neighbours(notion):
            check_pair(config, call, D, D2, pname, dict(kw, k=k, seed=seed))
    return body


# (id, comparator, neighbour, n_blocks given, moderate data, issue-28 defect marked xfail)
COMPARATOR_GROUPS = [
    (f"{name}-{nb}", name, nb, False, False, None)
    for name in ("dp_sis", "kendall", "mcmc", "noisy_iht") for nb in ("replace-one", "add/remove")
] + [
    ("two_stage-replace-one-moderate", "two_stage", "replace-one", True, True, None),
    ("two_stage-add/remove-moderate", "two_stage", "add/remove", False, True, None),
    ("two_stage-replace-one-extreme", "two_stage", "replace-one", True, False, 1),
    ("two_stage-add/remove-extreme", "two_stage", "add/remove", False, False, 1),
    ("two_stage-add/remove-n_blocks", "two_stage", "add/remove", True, True, 3),
]


def _run_comparator(name, neighbour, n_blocks_given, moderate, defect, n_examples):
    gid = f"{name}-{neighbour}-{n_blocks_given}-{moderate}"
    conclude(fuzz(name, gid, n_examples, cases(moderate=moderate),
                  _comparator_body(name, neighbour, n_blocks_given), defect))


@pytest.mark.parametrize("name, neighbour, n_blocks_given, moderate, defect",
                         _params(COMPARATOR_GROUPS))
def test_comparator(name, neighbour, n_blocks_given, moderate, defect):
    _run_comparator(name, neighbour, n_blocks_given, moderate, defect, 12)


@pytest.mark.slow
@pytest.mark.parametrize("name, neighbour, n_blocks_given, moderate, defect",
                         _params(COMPARATOR_GROUPS))
def test_comparator_slow(name, neighbour, n_blocks_given, moderate, defect):
    _run_comparator(name, neighbour, n_blocks_given, moderate, defect, slow(760))


PRESCREEN_GROUPS = [("dp_sis", "dp_sis", False, None), ("kendall", "kendall", False, None),
                    ("noisy_iht", "noisy_iht", False, None),
                    ("two_stage-moderate", "two_stage", True, None),
                    ("two_stage-extreme", "two_stage", False, 1)]


def _run_prescreen(name, moderate, defect, n_examples):
    conclude(fuzz("comparators.prescreen", f"prescreen-{name}-{moderate}", n_examples,
                  cases(moderate=moderate), _comparator_body(name, "replace-one", False, True),
                  defect))


@pytest.mark.parametrize("name, moderate, defect", _params(PRESCREEN_GROUPS))
def test_prescreen(name, moderate, defect):
    _run_prescreen(name, moderate, defect, 10)


@pytest.mark.slow
@pytest.mark.parametrize("name, moderate, defect", _params(PRESCREEN_GROUPS))
def test_prescreen_slow(name, moderate, defect):
    _run_prescreen(name, moderate, defect, slow(760))


# -- DP Frank-Wolfe and the screening rules (replace-one, n public), bounds up to 1e300 ------

_SCREENERS = {
    "dp_frank_wolfe": lambda X, y, lam, kw: dp_frank_wolfe(X, y, lam, n_iter=3, eps=1.0,
                                                           delta=1e-6, **kw),
    "adp_screen": lambda X, y, lam, kw: adp_screen(X, y, lam, n_iter=3, delta_opt=1e-6,
                                                   delta_screen=1e-6, screen_every=1, **kw),
    "rnm_screen": lambda X, y, lam, kw: rnm_screen(X, y, lam, n_iter=3, delta_opt=1e-6,
                                                   delta_screen=1e-6, **kw),
}


def _screening_body(name):
    def body(case, draw):
        lam = draw(st.sampled_from([1e-3, 1.0, 1e3]))
        kw = {"bounds": draw(st.sampled_from(COMPARATOR_BOUNDS)),
              "random_state": draw(st.integers(0, 2 ** 16))}

        def call(X, y):
            _SCREENERS[name](X, y, lam, kw)
        for pname, D, D2 in case.neighbours("replace_one"):
            check_pair(f"{name}/l1_radius={lam}", call, D, D2, pname, dict(kw, lam=lam))
    return body


@pytest.mark.parametrize("name", sorted(_SCREENERS))
def test_screening(name):
    conclude(fuzz(name, f"screening-{name}", 10, cases(), _screening_body(name)))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(_SCREENERS))
def test_screening_slow(name):
    conclude(fuzz(name, f"screening-{name}", slow(2000), cases(), _screening_body(name)))


# -- OpenDP's make_private_bss -----------------------------------------------------------------

PURE_METHODS = ("exponential", "permute_and_flip", "top_r")


def _opendp_body(neighbours):
    from mipdp.interop.opendp import make_private_bss

    configs = [(m, loss, b) for m in PURE_METHODS for loss in LOSSES for b in BOUNDS_KINDS]

    def body(case, draw):
        hinge = _is_hinge_case(case)
        method, loss, bkind = draw(st.sampled_from(
            [c for c in configs if (c[1] == "hinge") == hinge]))
        s = draw(st.integers(1, 2))
        kw = dict(method=method, loss=loss, bounds=_draw_bounds(draw, bkind, loss))
        kw.update(draw(st.sampled_from(SCORES)))
        m = make_private_bss(case.p, s, draw(st.sampled_from([0.1, 1.0, 10.0])),
                             neighbours=neighbours, **kw)

        def call(X, y):
            m((X, y))

        for name, D, D2 in case.neighbours(neighbours):
            check_pair(f"{method}/{loss}/{bkind}/{neighbours}", call, D, D2, name,
                       dict(kw, s=s))
    return body


def _run_opendp(neighbours, n_examples):
    pytest.importorskip("opendp")
    half = n_examples // 2
    conclude(fuzz("make_private_bss", f"{neighbours}/real", n_examples - half, cases(),
                  _opendp_body(neighbours))
             + fuzz("make_private_bss", f"{neighbours}/hinge", half, cases(labels=(-1.0, 1.0)),
                    _opendp_body(neighbours)))


@pytest.mark.parametrize("neighbours", ["replace_one", "add_remove"])
def test_make_private_bss(neighbours):
    _run_opendp(neighbours, 8)


@pytest.mark.slow
@pytest.mark.parametrize("neighbours", ["replace_one", "add_remove"])
def test_make_private_bss_slow(neighbours):
    _run_opendp(neighbours, slow(760))


# -- public input checks: n = 1 against n = 2, non-finite values --------------------------------

def _entry_calls(p=4, s=1):
    """One call per entry point that runs under add/remove: ``{name: call(X, y)}``."""
    calls = {
        "private_bss": lambda X, y: private_bss(X, y, s, 1.0, bounds=(0.5, 0.5),
                                                neighbours="add_remove", random_state=0),
        "selector": lambda X, y: PrivateBestSubsetSelector(
            s=s, eps=1.0, bounds=(0.5, 0.5), neighbours="add_remove", random_state=0).fit(X, y),
        "private_coefficients": lambda X, y: private_coefficients(
            X, y, [0], 1.0, bounds=(0.5, 0.5), neighbours="add_remove", random_state=0),
        "dp_sis": lambda X, y: dp_sis(X, y, s, 1.0, bounds=(0.5, 0.5), neighbour="add/remove",
                                      random_state=0),
        "kendall": lambda X, y: dp_kendall(X, y, s, 1.0, neighbour="add/remove", random_state=0),
        "two_stage": lambda X, y: two_stage(X, y, s, 1.0, n_blocks=1, neighbour="add/remove",
                                            random_state=0),
        "mcmc": lambda X, y: mcmc(X, y, s, 1.0, bounds=(0.5, 0.5), n_iter=5,
                                  neighbour="add/remove", random_state=0),
    }
    try:
        from mipdp.interop.opendp import make_private_bss
        m = make_private_bss(p, s, 1.0, bounds=(0.5, 0.5), neighbours="add_remove")
        calls["make_private_bss"] = lambda X, y: m((X, y))
    except ImportError:   # pragma: no cover - opendp is a dev dependency
        pass
    return calls


ENTRY_NAMES = ("private_bss", "selector", "private_coefficients", "dp_sis", "kendall",
               "two_stage", "mcmc", "make_private_bss")


@pytest.mark.parametrize("entry", ENTRY_NAMES)
def test_one_row_against_two_under_add_remove(entry):
    """n = 2 and n = 1 are add/remove neighbours: both run or both raise alike."""
    if entry == "make_private_bss":
        pytest.importorskip("opendp", reason="make_private_bss needs the opendp extra")
    call = _entry_calls()[entry]
    X = np.array([[0.1, -0.2, 0.3, 0.0], [0.4, 0.1, -0.3, 0.2]])
    y = np.array([0.3, -0.1])
    o1, _ = run(lambda: call(X, y))
    o2, _ = run(lambda: call(X[:1], y[:1]))
    assert o1 == o2


NON_FINITE = (np.nan, np.inf, -np.inf)


@settings(max_examples=12, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=cases(n_min=3), where=st.sampled_from(["X", "y"]),
       value=st.sampled_from(NON_FINITE), entry=st.sampled_from(ENTRY_NAMES + ("replace_one",)))
def test_non_finite_input_is_refused(case, where, value, entry):
    """NaN and ±inf are outside the data domain: refused by a public input check."""
    calls = _entry_calls(case.p)
    if entry == "replace_one":
        calls[entry] = lambda X, y: private_bss(X, y, 1, 1.0, bounds="private", random_state=0)
    X, y = case.X.copy(), case.y.copy()
    if where == "X":
        X[case.i, case.p - 1] = value
    else:
        y[case.i] = value
    out, _ = run(lambda: calls[entry](X, y))
    assert out[0] == "raise" and out[1] in ("ValueError", "OpenDP[ValueError]"), out
    assert re.search(r"nan|inf", out[2], re.IGNORECASE), out


# -- findings F2-F6 of the first slow run (fixed; regression tests) --------------------------

def test_finding_hinge_certification():
    """F2: a support of near-separable rows (three samples tied near the margin, s = 2) at
    ridge 1e-8, radius 100: the continuation stalls with a margin sample at ``t ≈ γ`` of an
    earlier level; the exact fallback now also tries wider margin windows and certifies it.
    (The rows are those of a ``PrivateBounds``-mapped fuzz data set.)"""
    from mipdp._validation import clip_design
    from mipdp.losses import get_loss
    from mipdp.losses.hinge import CERT_TOL
    Z = np.array([[0.16665450290070097, -0.5], [0.16665531448757828, -0.16691884619963157],
                  [0.16665653186789425, -0.16664502201784454], [0.1666561260744556, -0.5],
                  [-0.1666561260744556, 0.16664502201784454],
                  [0.16665531448757828, -0.1666906593814757]])
    y = np.ones(Z.shape[0])
    Xc, _ = clip_design(Z, None, 1.0, None)
    objective = get_loss("hinge", ridge=1e-8, radius=100.0).resolve(2, 1.0, None).bind(Xc, y)
    P, D, _, _ = objective.solve(np.array([[0, 1]]))
    scale = 1.0 + 100.0 * np.max(np.linalg.norm(Z, axis=1))   # the support's loss scale
    assert D[0] <= P[0] and P[0] - D[0] <= CERT_TOL * max(scale, abs(P[0]))
    assert abs(P[0] - 1.0 / 3.0) < 1e-6      # one sample of six violates by 2: L ≈ 2/6


def test_finding_outer_approximation_gap():
    """F3: the MIP path of top-R on a hinge problem at ridge 1e-8, radius 100 (a fuzz data
    set mapped by ``PrivateBounds`` and pre-screened to 5 columns: the rows below) stopped at
    relative gap 0.03: its cuts had entering coefficients of 10⁶ (``w_i²/4nλ'``), against
    which HiGHS's integrality tolerance is worth a whole unit of ``η``.  The master now caps
    them (``capped_cut``) and certifies the brute-force optimum.  (``private_bss`` now
    refuses this ridge for the hinge loss before reading data: ``check_certifiable``.)"""
    from mipdp.brute_force import all_supports
    from mipdp.enumeration import SupportEnumerator
    from mipdp.losses import get_loss
    Z = np.array([[0.5, -0.5, -0.1666569376613329, 0.16691884619963157, -0.5],
                  [-0.5, -0.5, -0.16665531448757828, 0.1665537472905822, -0.5],
                  [-0.5, 0.1666381369931226, 0.5, 0.16664502201784454, -0.1685517382873672],
                  [-0.5, 0.16663780368865225, -0.5, 0.16691884619963157, 0.5],
                  [-0.5, 0.16663780368865225, -0.1666561260744556, 0.16664502201784454,
                   -0.1685517382873672],
                  [-0.5, 0.16663780368865225, -0.16665653186789425, 0.16662220333602895, 0.5]])
    y = np.array([-1.0, -1.0, -1.0, -1.0, 1.0, -1.0])
    obj = get_loss("hinge", ridge=1e-8, radius=100.0).resolve(2, 0.5, None).bind(Z, y)
    enum = SupportEnumerator(obj, 2, scale=11.951779686442459, exhaustive_max=0,
                             explicit_max=0)
    center, value = enum.optimum()
    sup = all_supports(5, 2)
    ref = get_loss("hinge", ridge=1e-8, radius=100.0).resolve(2, 0.5, None).bind(Z, y)
    P, D, _, _ = ref.solve(sup)
    assert value <= np.min(P) + 1e-9 and value >= np.min(D) - 1e-9


def test_capped_cuts_are_global_lower_bounds():
    """``capped_cut`` (the master's cap on entering coefficients) keeps every cut below
    ``max(cut, floor)`` on every support, so below ``L``: brute force over random cuts."""
    import itertools

    from mipdp.enumeration.master import capped_cut
    rng = np.random.default_rng(0)
    p, s = 7, 3
    for _ in range(300):
        S = np.sort(rng.choice(p, s, replace=False))
        g = -np.abs(rng.standard_normal(p)) * 10.0 ** rng.integers(-3, 8, p)
        if rng.random() < 0.3:
            g[rng.integers(p)] = rng.standard_normal()      # a positive coefficient
        a = rng.uniform(0.0, 2.0)
        floor = rng.uniform(0.0, 0.5) if rng.random() < 0.5 else 0.0
        a2, g2 = capped_cut(a, g, S, floor)
        assert np.max(np.abs(g2)) <= max(np.max(np.abs(g)), 0) + 1e-12
        z0 = np.zeros(p)
        z0[S] = 1.0
        for T in itertools.combinations(range(p), s):
            z = np.zeros(p)
            z[list(T)] = 1.0
            orig = a + g @ (z - z0)
            capped = a2 + g2 @ (z - z0)
            assert capped <= max(orig, floor) + 1e-9 * max(1.0, abs(orig))
    # non-finite pieces give a vacuous (floor) cut, never an invalid one
    a2, g2 = capped_cut(float("nan"), np.zeros(p), np.arange(s), 0.0)
    assert a2 == 0.0 and not np.any(g2)
    a2, g2 = capped_cut(1.0, np.r_[-np.inf, np.zeros(p - 1)], np.arange(s), 0.0)
    assert a2 == 0.0 and not np.any(g2)
    a2, g2 = capped_cut(1.0, np.r_[np.zeros(s), -np.inf, np.zeros(p - s - 1)], np.arange(s), 0.0)
    assert np.isfinite(g2).all() and g2[s] == -1.0


@pytest.mark.parametrize("loss", ["hinge", "huber"])
@pytest.mark.parametrize("bounds", ["public", "PrivateBounds"])
def test_tiny_ridge_refused_before_the_data(loss, bounds):
    """The hinge and Huber solvers need ``ridge >= 1e-6·b_x²`` (``check_certifiable``):
    below it the call is refused before any data is read, with the same message on every
    data set (here, one and its neighbour)."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(12, 4))
    y = np.where(X[:, 0] > 0, 1.0, -1.0) if loss == "hinge" else X[:, 0]
    X2 = X.copy()
    X2[0] = 1e300
    kw = dict(loss=loss, ridge=1e-8, radius=100.0, random_state=0,
              bounds=CUSTOM_PRIVATE if bounds == "PrivateBounds"
              else ((1.0, None) if loss == "hinge" else (1.0, 1.0)))
    msgs = []
    for Xd in (X, X2):
        with pytest.raises(InvalidParameterError, match=r"ridge: .*1e-06·b_x²") as info:
            private_bss(Xd, y, 2, 1.0, **kw)
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]
    # the default ridge rises to the floor with b_x (a public rule), so it is never refused
    from mipdp.losses import LOSSES
    from mipdp.losses.score_rule import MIN_RELATIVE_RIDGE, default_ridge
    assert default_ridge(LOSSES[loss], 1e4) == MIN_RELATIVE_RIDGE * 1e8
    for Xd in (X, X2):
        private_bss(Xd, y, 2, 1.0, loss=loss, random_state=0,
                    bounds=(1e4, None) if loss == "hinge" else (1e4, 1.0))
    # least squares has a closed form: no floor
    private_bss(X, X[:, 0], 2, 1.0, ridge=1e-8, radius=100.0, bounds=(1.0, 1.0),
                random_state=0)


def test_finding_mistakes_recentre_on_a_table():
    """F7 (found by the slow fuzz once ranks joined the bounds kinds): ``mistakes`` on an
    exhaustive table (a pre-screen leaves p = 3) whose one-swap values came from a second
    closed form; two duplicated columns and ridge 1e-8 make every value ≈ 0, a one-swap
    undercut the table's minimum in the last bits, and re-centring on it raised
    ``KeyError`` on this data set while its neighbour (one row of ±1.8e308) released."""
    big = 1.7976931348623157e308
    X = np.array([[1.0, 3619.62110423028, -7802.048923295218, 3619.62110423028, -5292.87012807082],
                  [1.0, -9259.87039977323, -9472.77642792094, -9259.87039977323, -4229.6976197731],
                  [-big, big, big, -big, big],
                  [1.0, -3317.67577207877, -9864.91237713688, -3317.67577207877, 5386.37872339434],
                  [1.0, 9482.43954569804, 4789.0374767947, 9482.43954569804, -4899.02517975644],
                  [1.0, 9145.75631454809, 7411.06398016296, 9145.75631454809, 5607.93168601522],
                  [1.0, -8665.85817646476, 5922.98698129159, -8665.85817646476, 5058.16337072286],
                  [1.0, -6362.70408062207, 6738.10684384105, -6362.70408062207, -2958.59251025769],
                  [1.0, 5843.34942515171, -6930.47847367575, 5843.34942515171, -9411.67030921883]])
    y = np.full(9, big)
    y[2] = -0.5
    kw = dict(method="mistakes", delta=1e-6, neighbours="replace_one", bounds="ranks",
              ridge=1e-8, radius=100.0, prescreen=("kendall", 3, 0.3), random_state=8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = private_bss(X, y, 2, 10.0, **kw)
        X2, y2 = X.copy(), y.copy()
        X2[2] = 1.0 - 2.0 * (np.arange(5) % 2)        # the neighbour: row 2 replaced
        y2[2] = big
        b = private_bss(X2, y2, 2, 10.0, **kw)
    assert a.support.size == b.support.size == 2


def test_finding_singular_gram():
    """F6: bounds 1e100, ridge 1e-8: columns 1 and 3 clip to ±1e100 in every row, so
    ``X_S'X_S + ridge·I`` is singular in floating point (the ridge is below its last bit);
    the batched LU of ``ridge_ball_values`` raised ``LinAlgError`` on this data set, not on
    its neighbour (row 0 replaced).  Both now run, through the scale-free eigh path."""
    X = np.array([[1.0, -1e160, -1e-300, -BIG, 0.25], [-1.0, 1e160, 1e-300, BIG, -0.25]])
    y = np.array([0.5000000000000001, -0.25])
    X2 = X.copy()
    X2[0] = [0.25, 0.5, -1e300, 3.0, 1e5]
    for Xd in (X, X2):
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            private_bss(Xd, y, 2, 10.0, bounds=(1e100, 1e100), ridge=1e-8, radius=100.0,
                        random_state=83)


def test_certification_errors_carry_no_data():
    """The certification errors name no support and no gap (data figures): where a
    neighbour would run, an exception must not carry the data."""
    import inspect

    from mipdp.enumeration import enumerator
    from mipdp.losses import hinge, huber
    for mod in (hinge, huber, enumerator):
        src = inspect.getsource(mod)
        for m in re.finditer(r"raise CertificationError\((.*?)\)\s*\n", src, re.S):
            assert "supports[" not in m.group(1) and "gap {" not in m.group(1) \
                and "optimality_gap" not in m.group(1), m.group(1)[:200]
