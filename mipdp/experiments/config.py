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
    methods = ["top_r", "mistakes", "samp_agg", "mcmc", "dp_sis", "kendall"]

    [run]
    out = "results"
    jobs = 2
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass, field
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["StudyConfig", "load_config", "KINDS", "DEFAULT_METHODS"]

KINDS = ("recovery", "utility")
DEFAULT_METHODS = ("top_r", "mistakes", "samp_agg", "mcmc", "dp_sis", "kendall")

#: fields that change the results of a (method, n, trial) cell; a study directory may
#: only be resumed with the same values (n, trials and methods may grow)
FINGERPRINT = ("kind", "p", "s", "eps", "draws", "loss", "b_x", "b_y", "ridge", "radius", "rho",
               "snr", "seed", "test_fraction", "select_fraction")


@dataclass
class StudyConfig:
    """One study: a grid ``methods × ns × trials`` on seed 002's synthetic data.

    ``kind="recovery"`` releases supports with the whole ``eps`` per draw on all ``n``
    rows.  ``kind="utility"`` splits the rows ``1 − test_fraction`` / ``test_fraction``
    into train / test, selects with ``select_fraction · eps`` on the training rows and
    fits private coefficients by objective perturbation with the rest (seed 002 App. D.1).
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
    ridge: float = 120.0
    radius: float = 1.1
    rho: float = 0.1
    snr: float = 5.0
    seed: int = 0
    test_fraction: float = 0.3
    select_fraction: float = 0.5
    name: str | None = None

    def __post_init__(self) -> None:
        from .methods import METHODS
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


def load_config(path) -> tuple[StudyConfig, dict]:
    """``(StudyConfig, run_options)`` from a TOML file."""
    path = Path(path)
    with path.open("rb") as fh:
        data = tomllib.load(fh)
    study = dict(data.get("study", {}))
    if "n" in study and "ns" not in study:
        study["ns"] = study.pop("n")
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
