"""The n_jobs benchmark runs end to end at a tiny size and reports identical releases."""

import pytest

from experiments.studies import bench_parallel


def test_makespan_and_prediction():
    assert bench_parallel.makespan([3.0, 1.0, 1.0, 1.0], 2) == 3.0
    assert bench_parallel.makespan([1.0] * 4, 1) == 4.0
    # 1 s outside the maps, one map of two 1 s pieces: 3 s on one core, 2 s on two
    assert bench_parallel.predicted(3.0, [[1.0, 1.0]], 2) == 2.0


@pytest.mark.slow    # a research study end to end (the package's observer: test_parallel)
def test_bench_parallel_tiny(capsys):
    bench_parallel.main(["--p", "30", "--n", "300", "--draws", "3", "--n-jobs", "1", "2",
                         "--no-abess", "--warmup-p", "0"])
    out = capsys.readouterr().out
    assert "identical releases for n_jobs [1, 2]: True" in out
    assert "predicted x" in out and "n_jobs=2 against n_jobs=1" in out


@pytest.mark.slow
def test_machine_scaling_reports_every_ratio(capsys):
    import numpy as np
    X = np.linspace(-1.0, 1.0, 200 * 50).reshape(200, 50)
    ms = bench_parallel.machine_scaling(X)
    assert set(ms) == {"compute", "read", "write", "blas", "read_gbs", "read2_gbs"}
    assert all(np.isfinite(v) and v > 0 for v in ms.values())
    bench_parallel.main(["--p", "30", "--n", "300", "--draws", "3", "--n-jobs", "1",
                         "--no-abess", "--warmup-p", "0"])
    assert "this machine, two threads against one" in capsys.readouterr().out
