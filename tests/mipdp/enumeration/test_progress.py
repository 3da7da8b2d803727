"""Long enumerations report what they do: progress events, INFO lines, the CLI's bar."""

import builtins
import logging

import numpy as np
import pytest

from mipdp.enumeration import SupportEnumerator
from mipdp.enumeration.progress import Progress
from mipdp.losses import Hinge, LeastSquares


def _hinge(instance, p=12):
    X, y = instance(3, n=80, p=p)
    return Hinge(2.0, 1.5).bind(X, np.where(y >= np.median(y), 1.0, -1.0))


@pytest.mark.parametrize("options", [dict(exhaustive_max=0, explicit_max=0),
                                     dict(exhaustive_max=0)], ids=["mip", "explicit"])
def test_every_phase_reports(instance, options):
    events = []
    enum = SupportEnumerator(_hinge(instance), 3, scale=0.01,
                             progress=Progress(events.append, callback_interval=0.0),
                             **options)
    enum.top_supports(20)
    enum.mistake_scores()
    phases = {e["phase"] for e in events}
    assert {"warm_start", "optimum", "top_r"} <= phases
    assert any(p.startswith("class_") for p in phases)
    for e in events:
        assert e["event"] in ("start", "update", "done") and e["elapsed"] >= 0
    done = [e for e in events if e["event"] == "done" and e["phase"] == "optimum"]
    assert done and np.isfinite(done[0]["best"])
    assert any(e["event"] == "update" for e in events)  # steps, not only phase ends


def test_info_lines_are_throttled(caplog):
    prog = Progress(interval=3600.0)
    with caplog.at_level(logging.DEBUG, logger="mipdp.enumeration.progress"):
        prog.start("top_r", R=5)
        for i in range(50):
            prog.update("top_r", solves=i, best=0.5)
        prog.done("top_r", found=5)
    info = [r for r in caplog.records if r.levelno >= logging.INFO]
    assert not info  # nothing at INFO for a phase shorter than the interval
    assert sum("solves" in r.getMessage() for r in caplog.records) == 50  # DEBUG per step
    caplog.clear()
    prog = Progress(interval=0.0)
    with caplog.at_level(logging.INFO, logger="mipdp.enumeration.progress"):
        prog.update("optimum", solves=3, best=0.25, bound=0.2)
        prog.done("optimum", best=0.25)
    lines = [r.getMessage() for r in caplog.records]
    assert any("optimum" in m and "solves 3" in m and "best L 0.25" in m for m in lines)
    assert any("done" in m for m in lines)


def test_progress_rejects_a_non_callable():
    with pytest.raises(TypeError, match="progress"):
        Progress(callback=3)


def test_callbacks_are_throttled_but_see_phase_ends():
    seen = []
    prog = Progress(seen.append, callback_interval=3600.0)
    prog.start("x")
    for _ in range(100):
        prog.update("x", solves=1)
    prog.done("x")
    assert [e["event"] for e in seen] == ["start", "done"]


def test_cli_bar_without_tqdm_falls_back_to_log_lines(monkeypatch):
    from mipdp import cli
    real = builtins.__import__

    def no_tqdm(name, *a, **k):
        if name.startswith("tqdm"):
            raise ImportError("no tqdm here")
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_tqdm)
    callback, close = cli._progress_bar("top_r")
    assert callback is None
    close()


def test_cli_demo_runs_with_a_bar(capsys):
    pytest.importorskip("tqdm")
    from mipdp import cli
    assert cli.main(["demo", "--loss", "hinge", "--n", "200", "--p", "10", "--s", "2",
                     "--methods", "top_r"]) == 0
    assert "[top_r] released support" in capsys.readouterr().out
    for name in cli.PROGRESS_LOGGERS:
        assert logging.getLogger(name).getEffectiveLevel() <= logging.INFO


def test_least_squares_exhaustive_path_needs_no_reporter():
    rng = np.random.default_rng(0)
    X, y = np.clip(rng.normal(size=(50, 8)), -0.5, 0.5), np.clip(rng.normal(size=50), -0.5, 0.5)
    enum = SupportEnumerator(LeastSquares(120.0, 1.1).bind(X, y), 2, scale=0.01, progress=None)
    assert enum.top_supports(3).supports.shape == (3, 2)
