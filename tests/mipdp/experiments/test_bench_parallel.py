"""The n_jobs benchmark runs end to end at a tiny size and reports identical releases."""

from mipdp.experiments.studies import bench_parallel


def test_makespan_and_prediction():
    assert bench_parallel.makespan([3.0, 1.0, 1.0, 1.0], 2) == 3.0
    assert bench_parallel.makespan([1.0] * 4, 1) == 4.0
    # 1 s outside the maps, one map of two 1 s pieces: 3 s on one core, 2 s on two
    assert bench_parallel.predicted(3.0, [[1.0, 1.0]], 2) == 2.0


def test_bench_parallel_tiny(capsys):
    bench_parallel.main(["--p", "30", "--n", "300", "--draws", "3", "--n-jobs", "1", "2",
                         "--no-abess", "--warmup-p", "0"])
    out = capsys.readouterr().out
    assert "identical releases for n_jobs [1, 2]: True" in out
    assert "predicted x" in out and "n_jobs=2 against n_jobs=1" in out
