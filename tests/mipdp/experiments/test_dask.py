"""The same sweep through joblib's dask backend on a local in-process cluster."""

import pandas as pd
import pytest

pytest.importorskip("distributed")

from mipdp.experiments import StudyConfig, run_study  # noqa: E402


def test_dask_backend_matches_loky(tmp_path):
    cfg = StudyConfig(p=12, s=2, ns=[200], trials=2, draws=3, methods=["top_r", "kendall"],
                      name="d")
    ref = run_study(cfg, tmp_path / "a", jobs=1)
    # scheduler=None: a LocalCluster(n_workers=1, processes=False) is started and closed
    got = run_study(cfg, tmp_path / "b", backend="dask")
    assert len(got.computed) == 4
    pd.testing.assert_frame_equal(got.table.drop(columns="time_s"),
                                  ref.table.drop(columns="time_s"))
