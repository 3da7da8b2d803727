"""OpenDP interoperability: ``make_private_bss`` as an OpenDP Measurement, composed with
OpenDP's compositor; the privacy map is the package's guarantee (linear in ``d_in``)."""

import numpy as np
import pytest

dp = pytest.importorskip("opendp.prelude")

from opendp.mod import OpenDPException  # noqa: E402  (after the importorskip above)

from mipdp import InvalidParameterError, private_bss  # noqa: E402
from mipdp.interop.opendp import make_private_bss  # noqa: E402

B = (0.5, 0.5)


def _data(n=60, p=6, seed=0):
    rng = np.random.default_rng(seed)
    X = np.clip(rng.normal(size=(n, p)) * 0.4, -0.5, 0.5)
    y = np.clip(X[:, 0] - X[:, 1] + 0.1 * rng.normal(size=n), -0.5, 0.5)
    return X, y


@pytest.mark.parametrize("neighbours,metric", [("replace_one", "ChangeOneDistance"),
                                               ("add_remove", "SymmetricDistance")])
def test_measurement_metric_measure_and_map(neighbours, metric):
    m = make_private_bss(6, 2, 0.4, bounds=B, neighbours=neighbours, n_draws=2)
    assert metric in str(m.input_metric)
    assert "MaxDivergence" in str(m.output_measure)
    planned = 0.8                                   # 2 draws of 0.4
    assert m.map(1) == pytest.approx(planned)
    assert m.map(3) == pytest.approx(3 * planned)   # group privacy, pure DP
    assert m.map(0) == 0.0
    out = m(_data())
    assert len(out) == 2 and all(len(S) == 2 for S in out)


def test_composition_with_opendp_compositor():
    """Two mipdp releases composed by OpenDP: the map is the sum of the guarantees."""
    X, y = _data()
    a = make_private_bss(6, 2, 0.5, bounds=B, neighbours="add_remove")
    b = make_private_bss(6, 2, 0.25, bounds=B, neighbours="add_remove", method="top_r")
    comp = dp.c.make_composition([a, b])
    assert comp.map(1) == pytest.approx(0.75)
    assert comp.map(2) == pytest.approx(1.5)
    out = comp((X, y))
    assert len(out) == 2 and all(len(S) == 2 and max(S) < 6 for S in out)
    # the same map as the package's own composition of the two guarantees
    ga = private_bss(X, y, 2, 0.5, bounds=B, neighbours="add_remove").guarantee
    gb = private_bss(X, y, 2, 0.25, bounds=B, neighbours="add_remove",
                     method="top_r").guarantee
    assert (ga + gb).epsilon == pytest.approx(comp.map(1))


def test_metrics_do_not_mix_and_conversion_is_explicit():
    r1 = make_private_bss(6, 2, 0.5, bounds=B)
    ar = make_private_bss(6, 2, 0.5, bounds=B, neighbours="add_remove")
    with pytest.raises(OpenDPException, match="input metrics"):   # OpenDP refuses to mix them
        dp.c.make_composition([r1, ar])
    conv = make_private_bss(6, 2, 0.5, bounds=B, neighbours="add_remove",
                            input_metric="change_one")
    assert conv.map(1) == pytest.approx(1.0)        # 2ε per changed row
    comp = dp.c.make_composition([r1, conv])
    assert comp.map(1) == pytest.approx(1.5)


def test_domain_checks_shape():
    m = make_private_bss(6, 2, 0.5, bounds=B)
    X, y = _data(p=7)
    # the adapter's ValueError, re-raised by OpenDP across its FFI boundary
    with pytest.raises((OpenDPException, ValueError), match="not in the measurement's domain"):
        m((X, y))


@pytest.mark.parametrize("kwargs,match", [
    (dict(neighbours="bounded"), "neighbours"),
    (dict(neighbours="replace_one", input_metric="symmetric"), "symmetric"),
    (dict(input_metric="hamming"), "input_metric"),
    (dict(random_state=0), "random_state"),
    (dict(method="mistakes"), "pure-DP"),
    (dict(method="mistakes", delta=1e-6), "pure-DP"),
    (dict(bounds="data"), "pure-DP"),
    (dict(ridge=-1.0), "ridge"),
    (dict(foo=1), "unknown"),
])
def test_refused_before_data(kwargs, match):
    kw = dict(bounds=B)
    kw.update(kwargs)
    with pytest.raises(InvalidParameterError, match=match):
        make_private_bss(6, 2, 0.5, **kw)
