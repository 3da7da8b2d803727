"""Progress without configuring logging: ``verbose=`` and ``set_verbosity`` (issue 20, 6)."""

import io
import logging
import warnings

import pytest

import mipdp
from mipdp import PrivateBestSubsetSelector, private_bss
from mipdp._logging import verbosity
from mipdp.datasets import make_bss_regression


@pytest.fixture(scope="module")
def data():
    X, y, _ = make_bss_regression(n=300, p=8, s=2, random_state=0)
    return X, y


def _run(X, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return private_bss(X, y, 2, 1.0, bounds=(0.5, 0.5), random_state=0, **kw)


def test_verbose_shows_the_phases_on_stderr_for_one_call(data, capsys):
    X, y = data
    _run(X, y)
    assert "private_bss" not in capsys.readouterr().err       # silent by default
    _run(X, y, verbose=1)
    err = capsys.readouterr().err
    assert "private_bss: method=exponential" in err and "sampling" in err
    assert "not private" in err
    _run(X, y)
    assert "private_bss" not in capsys.readouterr().err       # only for that call
    assert logging.getLogger("mipdp").handlers == []


def test_verbose_2_shows_every_phase_and_the_selector_has_it(data):
    X, y = data
    buf = io.StringIO()
    with verbosity(2, stream=buf):
        _run(X, y)
    assert "sampling: started" in buf.getvalue()
    assert PrivateBestSubsetSelector(verbose=1).verbose == 1
    with pytest.raises(mipdp.InvalidParameterError, match="'verbose' parameter"):
        private_bss(X, y, 2, 1.0, bounds=(0.5, 0.5), verbose=-1)


def test_set_verbosity_for_every_call_and_off(data):
    X, y = data
    buf = io.StringIO()
    try:
        mipdp.set_verbosity("info", stream=buf)
        _run(X, y)
        assert "private_bss: method=exponential" in buf.getvalue()
    finally:
        mipdp.set_verbosity(None)
    n = len(buf.getvalue())
    _run(X, y)
    assert len(buf.getvalue()) == n and logging.getLogger("mipdp").handlers == []
    with pytest.raises(mipdp.InvalidParameterError, match="'level'"):
        mipdp.set_verbosity("loud")
