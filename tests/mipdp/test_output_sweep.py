"""A review sweep of the outputs: every field of every result of every public entry point,
and every log line at DEBUG, is either derived only from the release and public inputs
(an allow-list, below) or labelled "not private".

A field is labelled when a component of its path contains ``not_private`` (``info``'s
``clipped_fraction_not_private``, the selector's ``result_not_private_``), or when the
result class documents it as **not private** (``timings``, ``stats``, ``mechanism``,
``candidates``: the numpydoc entry says so).  A log line is labelled when its message says
``not private``.  Anything else must be in :data:`PUBLIC_FIELDS` / :data:`PUBLIC_LOGS`
with the reason it is public: a new field or log line that is neither fails the sweep
(:func:`test_a_new_unlabelled_field_fails_the_sweep`).
"""

from __future__ import annotations

import dataclasses
import inspect
import logging
import re
import warnings

import numpy as np
import pytest

from mipdp import (
    PrivateBestSubsetSelector,
    PrivateSparseClassifier,
    PrivateSparseRegression,
    private_bss,
    private_coefficients,
    tukey_regression,
)
from mipdp.comparators import dp_kendall, dp_sis, mcmc, noisy_iht, prescreen, two_stage
from mipdp.screening import adp_screen, dp_frank_wolfe, rnm_screen

B = 0.5

#: fields derived from the release and the public inputs only (path -> why)
PUBLIC_FIELDS = {
    "support": "the release", "supports": "the release (every draw)",
    "method": "the public method name", "guarantee": "computed from public inputs",
    "feature_names_in": "public column names", "info": "a dict: its keys below",
    "coef": "the release (private coefficients)",
    "R": "public top-R size", "_columns": "the pre-screen's release (private columns)",
    # info keys: calibrations and the public parameters
    "info.bounds": "the public bounds", "info.loss": "public", "info.method_run": "public",
    "info.radius": "public", "info.ridge": "public", "info.score_rule": "public",
    "info.epsilon_per_draw": "public", "info.gamma": "public", "info.topk": "public",
    "info.n_iter": "public", "info.step": "public", "info.residual_bound": "public",
    "info.normaliser": "public (n under replace-one, n_public under add/remove)",
    "info.eps0": "public calibration", "info.n_mechanisms": "public calibration",
    "info.sensitivity": "public calibration", "info.delta": "public",
    "info.gumbel_scales": "public calibration", "info.n_blocks": "public (n under "
    "replace-one; n_blocks given under add/remove)", "info.alpha": "public",
    "info.l1_radius": "public", "info.n_iter_run": "public",
    "info.prescreen": "the pre-screen's release and its public calibration",
    "info.private_ranges": "the private ranges' release (noisy quantiles)",
    "info.prescreen_k": "public", "info.prescreen_method": "public",
    "info.init": "public initialiser", "info.target_scale": "public (eps / (2 Delta))",
    "info.inner_solver": "a fixed description", "info.ptr_passed": "the outcome of the "
    "eps0-DP test of propose-test-release (private, docs/privacy.md)",
    "info.screen": "public screening rule",
    # the calibration of private coefficients (ObjectivePerturbationCalibration)
    "calibration": "public calibration (its fields below)",
    # the screening result's own fields
    "w": "the release (noisy Frank-Wolfe iterate)", "kept": "the release",
    "screened": "the release", "history": "documented below",
    "n_iter": "public", "loss": "public", "calibration.*": "public calibration",
    "coef_": "the release (the noisy Frank-Wolfe iterate)", "l1_radius": "public",
    "composition": "public calibration", "privacy": "public calibrations (NoiseCalibration)",
    "privacy.optimizer": "public calibration", "privacy.screening": "public calibration",
    "fw_coordinates": "the release (private vertex picks)", "fw_signs": "the release",
    "coef_path": "the release (every private iterate)", "info.n_features": "public p",
    "info.screen_iterations": "the public schedule",
    "info.n_samples": "n: public under replace-one, the notion of the proven calibration",
    # the fitted selector
    "support_": "the release", "guarantee_": "public calibration",
    "n_features_in_": "public (the number of columns)",
    "feature_names_in_": "public column names",
    # bounds=None: the data-free rule's name of the score it ran
    "info.bounds_rule": "a function of public n, eps and the arguments (mipdp.bounds_free)",
    # the Tukey mechanism (TukeyResult) and the private models
    "intercept": "the release (private intercept)",
    "m": "public (given, or from public n) or a release (the private lower bound on n)",
    "info.m_source": "public: how m was chosen", "info.eps_m": "public budget split",
    "info.eps_ptr": "public budget split", "info.eps_em": "public budget split",
    "info.n_lower_bound": "the release of the eps_m-DP lower bound on n (or None)",
    "info.target_depth": "a function of m (public or released)",
    "info.coordinates": "a fixed description of what each part released",
    "intercept_": "the release (private intercept)",
    "feature_ranges_": "public bounds, or the release of the private ranges (+-inf "
    "off the support / on the Tukey route)",
}

#: DEBUG templates whose arguments are public (template -> why)
PUBLIC_LOGS = {
    "dp_sis: p=%d k=%d eps=%g sensitivity=%g topk=%s": "public parameters",
    "noisy_iht: p=%d k=%d T=%d eps=%g delta=%g eps0=%g sensitivity=%g": "public parameters",
    "dp_frank_wolfe: Laplace scale %g (ε_iter %g)": "public calibration",
    "prescreen(%s): bounds are not used by this method": "public parameters",
    "feature names not kept: %s": "the column names' type (public)",
}


def _data(n=60, p=6, seed=0):
    rng = np.random.default_rng(seed)
    X = np.clip(rng.normal(size=(n, p)) * 0.4, -B, B)
    y = np.clip(X[:, 0] - X[:, 1] + 0.1 * rng.normal(size=n), -B, B)
    return X, y


def _entry_points():
    X, y = _data()
    yl = np.where(y > 0, 1.0, -1.0)
    kw = dict(bounds=(B, B), random_state=0)
    Xt, yt = _data(n=20_000, p=4, seed=1)      # rows enough for the Tukey mechanism's test
    return {
        "private_bss/default": lambda: private_bss(X, y, 2, 1.0, random_state=0),
        "tukey_regression": lambda: tukey_regression(Xt, yt, 2.0, 1e-5, random_state=0),
        "tukey_regression/add_remove": lambda: tukey_regression(
            Xt, yt, 2.0, 1e-5, neighbours="add_remove", random_state=0),
        "PrivateSparseRegression": lambda: PrivateSparseRegression(
            s=2, eps=2.0, delta=1e-5, random_state=0).fit(Xt, yt),
        "PrivateSparseRegression/public": lambda: PrivateSparseRegression(
            s=2, eps=2.0, delta=1e-5, bounds=(B, B), random_state=0).fit(X, y),
        "PrivateSparseRegression/private": lambda: PrivateSparseRegression(
            s=2, eps=2.0, delta=1e-5, bounds="private", random_state=0).fit(Xt, yt),
        "PrivateSparseClassifier": lambda: PrivateSparseClassifier(
            s=2, eps=2.0, bounds=B, random_state=0).fit(X, yl),
        "private_bss/exponential": lambda: private_bss(X, y, 2, 1.0, **kw),
        "private_bss/add_remove": lambda: private_bss(X, y, 2, 1.0, neighbours="add_remove",
                                                      **kw),
        "private_bss/top_r": lambda: private_bss(X, y, 2, 1.0, method="top_r", **kw),
        "private_bss/permute_and_flip": lambda: private_bss(X, y, 2, 1.0,
                                                            method="permute_and_flip", **kw),
        "private_bss/mistakes": lambda: private_bss(X, y, 2, 1.0, method="mistakes",
                                                    delta=1e-6, **kw),
        "private_bss/hinge": lambda: private_bss(X, yl, 2, 1.0, loss="hinge",
                                                 bounds=(B, None), random_state=0),
        "private_bss/ranks": lambda: private_bss(X, y, 2, 1.0, bounds="ranks",
                                                 random_state=0),
        "private_bss/kendall": lambda: private_bss(X, y, 2, 1.0, bounds="kendall",
                                                   random_state=0),
        "private_bss/private": lambda: private_bss(X, y, 2, 1.0, bounds="private",
                                                   random_state=0),
        "private_bss/prescreen": lambda: private_bss(X, y, 2, 1.0,
                                                     prescreen=("dp_sis", 4, 0.3), **kw),
        "selector": lambda: PrivateBestSubsetSelector(s=2, eps=1.0, bounds=(B, B),
                                                      random_state=0).fit(X, y),
        "private_coefficients": lambda: private_coefficients(X, y, [0, 1], 1.0, **kw),
        "dp_sis": lambda: dp_sis(X, y, 2, 1.0, **kw),
        "dp_kendall": lambda: dp_kendall(X, y, 2, 1.0, random_state=0),
        "dp_kendall/add_remove": lambda: dp_kendall(X, y, 2, 1.0, random_state=0,
                                                    neighbour="add/remove"),
        "two_stage": lambda: two_stage(X, y, 2, 1.0, random_state=0),
        "mcmc": lambda: mcmc(X, y, 2, 1.0, n_iter=20, **kw),
        "noisy_iht": lambda: noisy_iht(X, y, 2, 1.0, **kw),
        "prescreen/dp_sis": lambda: prescreen("dp_sis", X, y, 3, 1.0, **kw),
        "prescreen/kendall": lambda: prescreen("kendall", X, y, 3, 1.0, random_state=0),
        "prescreen/two_stage": lambda: prescreen("two_stage", X, y, 3, 1.0, **kw),
        "prescreen/noisy_iht": lambda: prescreen("noisy_iht", X, y, 3, 1.0, **kw),
        "dp_frank_wolfe": lambda: dp_frank_wolfe(X, y, 1.0, n_iter=20, eps=1.0, delta=1e-6,
                                                 bounds=(B, B), random_state=0),
        "adp_screen": lambda: adp_screen(X, y, 1.0, n_iter=20, delta_opt=1e-6,
                                         delta_screen=1e-6, bounds=(B, B), random_state=0,
                                         screen_every=10),
        "rnm_screen": lambda: rnm_screen(X, y, 1.0, n_iter=20, delta_opt=1e-6,
                                         delta_screen=1e-6, bounds=(B, B), random_state=0),
    }


# -- what a result holds -------------------------------------------------------------------
def _documented_not_private(cls) -> set[str]:
    """Field names whose numpydoc entry (in ``cls`` or a base) says "not private"."""
    out = set()
    for klass in inspect.getmro(cls):
        doc = inspect.getdoc(klass) or ""
        entries = re.split(r"\n(?=[A-Za-z_][\w, ]*\s:\s)", doc)
        for entry in entries:
            head, _, body = entry.partition("\n")
            names = head.split(" : ")[0]
            if "not private" in body.lower() or "not private" in head.lower():
                out.update(n.strip() for n in names.split(","))
    return out


def _paths(obj, prefix=""):
    """Every field path of a result: dataclass fields, public attributes of a fitted
    estimator (ending in ``_``), and the keys of its dicts (recursively)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        names = [f.name for f in dataclasses.fields(obj)]
    elif hasattr(obj, "get_params"):                  # a fitted estimator
        names = [k for k in vars(obj) if k.endswith("_") and not k.startswith("_")]
    else:
        return
    for name in names:
        path = f"{prefix}{name}"
        value = getattr(obj, name)
        yield path, obj
        if isinstance(value, dict):
            yield from _dict_paths(value, path + ".", obj)


def _dict_paths(d, prefix, owner):
    for key, value in d.items():
        path = f"{prefix}{key}"
        yield path, owner
        if isinstance(value, dict):
            yield from _dict_paths(value, path + ".", owner)


def _unlabelled(paths_owners) -> list[str]:
    bad = []
    for path, owner in paths_owners:
        parts = path.split(".")
        if any("not_private" in p for p in parts):
            continue
        if parts[0] in _documented_not_private(type(owner)):
            continue
        if path in PUBLIC_FIELDS or f"{parts[0]}.*" in PUBLIC_FIELDS:
            continue
        if len(parts) > 1 and ".".join(parts[:2]) in PUBLIC_FIELDS and parts[0] == "info":
            continue                     # below a public info entry (e.g. its calibration)
        bad.append(path)
    return bad


def _run(call, caplog):
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="mipdp"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = call()
    return out, list(caplog.records)


def _unlabelled_logs(records) -> list[str]:
    return sorted({r.msg for r in records
                   if r.levelno <= logging.DEBUG and "not private" not in r.getMessage()
                   and r.msg not in PUBLIC_LOGS})


ENTRY_POINTS = sorted(_entry_points())


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_every_field_and_debug_line_is_public_or_labelled(entry, caplog):
    result, records = _run(_entry_points()[entry], caplog)
    paths = list(_paths(result))
    assert paths, f"{entry}: no fields found"
    bad = _unlabelled(paths)
    assert not bad, (f"{entry}: fields neither public (PUBLIC_FIELDS) nor labelled 'not "
                     f"private': {bad}")
    logs = _unlabelled_logs(records)
    assert not logs, f"{entry}: DEBUG lines neither public nor labelled 'not private': {logs}"


def test_a_new_unlabelled_field_fails_the_sweep(caplog):
    """The sweep catches a field added without a label (the check a reviewer would do)."""
    result, _ = _run(_entry_points()["noisy_iht"], caplog)
    result.info["largest_residual"] = 0.3                 # depends on the data, unlabelled
    assert _unlabelled(list(_paths(result))) == ["info.largest_residual"]
    result.info["largest_residual_not_private"] = result.info.pop("largest_residual")
    assert _unlabelled(list(_paths(result))) == []


def test_a_new_unlabelled_log_line_fails_the_sweep(caplog):
    log = logging.getLogger("mipdp.comparators.noisy_iht")
    with caplog.at_level(logging.DEBUG, logger="mipdp"):
        log.debug("noisy_iht: largest residual %g", 0.3)
        log.debug("noisy_iht: largest residual %g (not private)", 0.3)
    assert _unlabelled_logs(caplog.records) == ["noisy_iht: largest residual %g"]
