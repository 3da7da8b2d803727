"""Study definitions: a dataclass, and TOML files read with :mod:`tomllib`.

A config file has a ``[study]`` table with the fields of :class:`StudyConfig` and an
optional ``[run]`` table (``out``, ``jobs``, ``backend``, ``scheduler``)::

    [study]
    name = "seed002_recovery"
    kind = "recovery"            # or "utility"
    p = 100
    s = 5
    eps = 1.0
    ns = [3000, 4000, 5000, 6000, 7000, 8000]
    trials = 10
    draws = 100
    methods = ["exponential", "top_r", "mistakes", "samp_agg", "mcmc", "dp_sis", "kendall"]
    design = "seed002"           # or "cancel" (sign cancellation, screening fails)
    rho = 0.1                    # default 0.1 for seed002, 0.7 for cancel
    time_limit = 600             # seconds per MIP cell (optional)

    [run]
    out = "results"
    jobs = 2
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .real_bench import RealConfig

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["StudyConfig", "load_config", "KINDS", "DEFAULT_METHODS"]

KINDS = ("recovery", "utility")
DEFAULT_METHODS = ("exponential", "top_r", "mistakes", "samp_agg", "mcmc", "dp_sis", "kendall")
#: default correlation of each design (Prastakos et al.'s ρ; the cancelling pair's)
DEFAULT_RHO = {"seed002": 0.1, "cancel": 0.7}

#: fields that change the results of a (method, n, trial) cell; a study directory may
#: only be resumed with the same values (n, trials and methods may grow).  ``time_limit``
#: is not among them: a cell stopped by it is rerun when the limit grows.
FINGERPRINT = ("kind", "p", "s", "eps", "draws", "loss", "b_x", "b_y", "ridge", "radius", "rho",
               "snr", "seed", "test_fraction", "select_fraction", "design", "extra_draws",
               "em_ball")
#: values of fingerprint fields that older study directories did not record
FINGERPRINT_DEFAULTS = {"design": "seed002", "extra_draws": 0, "em_ball": None}


@dataclass
class StudyConfig:
    """One study: a grid ``methods × ns × trials`` on synthetic data.

    ``design`` is ``"seed002"`` (Prastakos et al.'s (2025) AR(1) design with correlation ``rho``) or
    ``"cancel"`` (sign cancellation, :func:`mipdp.datasets.make_bss_regression`: a true
    feature with no marginal correlation with ``y``; ``rho`` is the cancelling pair's
    correlation).  ``rho=None`` takes the design's default (:data:`DEFAULT_RHO`).

    For the MIP methods (``exponential``, ``top_r``, ``mistakes``) every cell also records
    the exact (or certified-interval) probability that one draw is the truth, and, when
    ``em_reference`` is on, every ``(n, trial)`` gets the exponential mechanism's own
    certified ``P(truth)`` (:func:`~mipdp.experiments.em_reference.em_truth_probability`,
    mistake ball ``em_ball``, default by size).  ``extra_draws`` further draws of the
    exponential mechanism's sampler give the frequency of the truth over many cheap draws.
    ``time_limit`` (seconds) bounds each MIP cell: a cell that hits it releases nothing and
    is recorded as not finished (rerun when the limit grows).

    ``kind="recovery"`` releases supports with the whole ``eps`` per draw on all ``n``
    rows.  ``kind="utility"`` splits the rows ``1 − test_fraction`` / ``test_fraction``
    into train / test, selects with ``select_fraction · eps`` on the training rows and
    fits private coefficients by objective perturbation with the rest (Prastakos et al., App. D.1).
    """

    kind: str = "recovery"
    p: int = 100
    s: int = 5
    eps: float = 1.0
    ns: list = field(default_factory=lambda: [3000, 4000, 5000, 6000, 7000, 8000])
    trials: int = 10
    draws: int = 100
    methods: list = field(default_factory=lambda: list(DEFAULT_METHODS))
    loss: str = "least_squares"
    b_x: float = 0.5
    b_y: float = 0.5
    ridge: float | None = None     # None: the default score derived from the bounds
    radius: float | None = None
    rho: float | None = None
    snr: float = 5.0
    seed: int = 0
    test_fraction: float = 0.3
    select_fraction: float = 0.5
    design: str = "seed002"
    extra_draws: int = 1000
    em_reference: bool = True
    em_ball: int | None = None
    time_limit: float | None = None
    name: str | None = None

    def __post_init__(self) -> None:
        from ..datasets import DESIGNS
        from .methods import METHODS
        if self.design not in DESIGNS:
            raise ValueError(f"design: must be one of {list(DESIGNS)}, got {self.design!r}")
        if self.rho is None:
            self.rho = DEFAULT_RHO[self.design]
        self.rho = float(self.rho)
        if self.ridge is None or self.radius is None:   # the default score, from public bounds
            from ..losses import default_score
            ridge, radius = default_score(self.loss, int(self.s), float(self.b_x),
                                          float(self.b_y))
            self.ridge = ridge if self.ridge is None else float(self.ridge)
            self.radius = radius if self.radius is None else float(self.radius)
        if self.time_limit is not None and not float(self.time_limit) > 0:
            raise ValueError(f"time_limit: must be > 0 seconds, got {self.time_limit}")
        if int(self.extra_draws) < 0:
            raise ValueError("extra_draws: must be >= 0")
        if self.kind not in KINDS:
            raise ValueError(f"kind: must be one of {list(KINDS)}, got {self.kind!r}")
        self.ns = [int(n) for n in self.ns]
        self.methods = list(self.methods)
        unknown = [m for m in self.methods if m not in METHODS]
        if unknown:
            raise ValueError(f"methods: unknown {unknown}; known: {sorted(METHODS)}")
        for f in ("p", "s", "trials", "draws"):
            if int(getattr(self, f)) < 1:
                raise ValueError(f"{f}: must be >= 1")
        if self.seed < 0:
            raise ValueError("seed: must be >= 0")
        if self.name is None:
            self.name = f"{self.kind}_{self.loss}"

    def fingerprint(self) -> dict:
        return {k: getattr(self, k) for k in FINGERPRINT}

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def load_config(path) -> tuple[StudyConfig | RealConfig, dict]:
    """``(StudyConfig, run_options)`` from a TOML file.

    A ``[study]`` with ``kind = "real"`` is the real-data benchmark: its grid is a
    :class:`~mipdp.experiments.real_bench.RealConfig` instead (returned in its place).
    """
    path = Path(path)
    with path.open("rb") as fh:
        data = tomllib.load(fh)
    study = dict(data.get("study", {}))
    if "n" in study and "ns" not in study:
        study["ns"] = study.pop("n")
    if study.get("kind") == "real":        # the real-data benchmark (its own grid)
        from .real_bench import load_real_config
        study.setdefault("name", path.stem)
        run = dict(data.get("run", {}))
        bad = set(run) - {"out", "jobs"}
        if bad:
            raise ValueError(f"{path}: unknown [run] keys {sorted(bad)} (a real-data config "
                             "takes out and jobs)")
        return load_real_config(study), run
    names = {f.name for f in dataclasses.fields(StudyConfig)}
    extra = set(study) - names
    if extra:
        raise ValueError(f"{path}: unknown [study] keys {sorted(extra)}; known: {sorted(names)}")
    if "name" not in study:
        study["name"] = path.stem
    run = dict(data.get("run", {}))
    bad = set(run) - {"out", "jobs", "backend", "scheduler"}
    if bad:
        raise ValueError(f"{path}: unknown [run] keys {sorted(bad)}")
    return StudyConfig(**study), run


# ------------------------------------------------------------------ a file of named studies
#: the smoke run of a runner study (``kind = "recovery"`` or ``"utility"``): tiny sizes,
#: same design, loss and methods (less the slow MCMC, Samp-Agg and abess)
RUNNER_SMOKE = {"p": 16, "s": 3, "ns": [300], "trials": 1, "draws": 3, "extra_draws": 50,
                "time_limit": 120}
#: the smoke run of the real-data benchmark (``kind = "real"``)
REAL_SMOKE = {"sets": ["CASchools"], "s": [3], "eps": [1.0], "draws": 20, "range_draws": 2,
              "synth_designs": ["seed002_rho0.7"], "synth_p": 8, "synth_s": 2,
              "synth_ns": [200], "synth_trials": 1}
_SLOW_METHODS = ("mcmc", "samp_agg", "abess")


@dataclass
class StudyEntry:
    """One named study of a studies file (:func:`load_studies`).

    ``kind`` is ``"module"`` (a study module, :func:`mipdp.experiments.studies.study_modules`
    of ``folder``, the studies file's folder; run once per entry of ``runs``, each a table
    of its options) or a runner kind (``"recovery"``,
    ``"utility"``, ``"real"``: ``params`` is the ``[study]`` table of a single-study file).
    ``smoke`` overrides the parameters (of every run) in a smoke run.
    """

    name: str
    kind: str
    params: dict = field(default_factory=dict)
    runs: list = field(default_factory=list)
    module: str | None = None
    smoke: dict = field(default_factory=dict)
    run: dict = field(default_factory=dict)
    doc: str = ""
    folder: Path | None = None

    def runner_config(self, smoke: bool = False) -> StudyConfig | RealConfig:
        """The runner's config of a ``recovery``/``utility``/``real`` study."""
        params = dict(self.params, name=self.name, kind=self.kind)
        if "n" in params and "ns" not in params:
            params["ns"] = params.pop("n")
        if self.kind == "real":
            from .real_bench import load_real_config
            if smoke:
                params.update(REAL_SMOKE)
                params.update(self.smoke)
            return load_real_config(params)
        if smoke:
            params.update(RUNNER_SMOKE)
            params["methods"] = [m for m in params.get("methods", DEFAULT_METHODS)
                                 if m not in _SLOW_METHODS]
            params.update(self.smoke)
        return StudyConfig(**params)

    def module_runs(self, smoke: bool = False) -> list[dict]:
        """The parameter tables of a module study's runs (smoke overrides applied)."""
        return [dict(r, **self.smoke) if smoke else dict(r) for r in self.runs]


def load_studies(path) -> dict[str, StudyEntry]:
    """The named studies of a studies file (``experiments/studies.toml``), in file order.

    Every top-level table is one study, named by its key.  A module study::

        [mcmc_mixing]
        module = "mcmc_mixing"              # default: the table's name
        args = {n = [4000], steps = [300, 1000], chains = 50}   # or runs = [{...}, {...}]
        smoke = {steps = [20], chains = 2}

    A runner study (the fields of :class:`StudyConfig`, or of the real-data benchmark)::

        [seed002_ls]
        kind = "recovery"
        p = 100
        ...
        run = {jobs = 2}
        smoke = {ns = [500]}               # on top of RUNNER_SMOKE
    """
    from .studies import study_modules
    path = Path(path)
    known = study_modules(path.parent)
    with path.open("rb") as fh:
        data = tomllib.load(fh)
    out: dict[str, StudyEntry] = {}
    for name, table in data.items():
        if not isinstance(table, dict):
            raise ValueError(f"{path}: {name!r} must be a table ([{name}])")
        table = dict(table)
        smoke = dict(table.pop("smoke", {}))
        run = dict(table.pop("run", {}))
        doc = str(table.pop("doc", ""))
        if "kind" in table and table["kind"] != "module":
            kind = table.pop("kind")
            if kind not in KINDS + ("real",):
                raise ValueError(f"{path} [{name}]: kind must be one of "
                                 f"{list(KINDS) + ['real', 'module']}, got {kind!r}")
            out[name] = StudyEntry(name, kind, params=table, smoke=smoke, run=run, doc=doc)
            continue
        table.pop("kind", None)
        module = str(table.pop("module", name))
        if module not in known:
            raise ValueError(f"{path} [{name}]: unknown study module {module!r}; known: "
                             f"{sorted(known)}")
        if "args" in table and "runs" in table:
            raise ValueError(f"{path} [{name}]: give args or runs, not both")
        runs = table.pop("runs", None)
        runs = [dict(r) for r in runs] if runs is not None else [dict(table.pop("args", {}))]
        if table:
            raise ValueError(f"{path} [{name}]: unknown keys {sorted(table)}; a module study "
                             "takes module, args or runs, smoke and doc")
        out[name] = StudyEntry(name, "module", runs=runs, module=module, smoke=smoke, run=run,
                               doc=doc, folder=path.parent)
    return out
