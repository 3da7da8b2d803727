"""SupportIndex (mipdp/mechanisms/_support_index.py): the samplers' look-up of singletons."""

import itertools

import numpy as np

from mipdp.mechanisms import _support_index
from mipdp.mechanisms._support_index import SupportIndex


def test_every_row_found_and_nothing_else():
    rows = np.array(list(itertools.combinations(range(11), 3)))
    idx = SupportIndex(rows)
    assert len(idx) == rows.shape[0]
    for i, r in enumerate(rows.tolist()):
        assert idx.get(tuple(r)) == i and tuple(r) in idx
    for key in [(0, 1, 11), (0, 1), (0, 1, 2, 3), (5, 5, 5)]:
        assert idx.get(key) is None and key not in idx


def test_hash_collisions_only_cost_a_comparison(monkeypatch):
    monkeypatch.setattr(_support_index, "_hash",
                        lambda rows: np.zeros(np.atleast_2d(rows).shape[0], dtype=np.uint64))
    rows = np.array(list(itertools.combinations(range(7), 2)))
    idx = SupportIndex(rows)
    assert [idx.get(tuple(r)) for r in rows.tolist()] == list(range(rows.shape[0]))
    assert idx.get((0, 7)) is None


def test_long_supports_and_empty_index():
    rng = np.random.default_rng(0)
    rows = np.unique(np.sort(rng.choice(10**6, size=(2000, 12)), axis=1), axis=0)
    idx = SupportIndex(rows)
    assert all(idx.get(tuple(r)) == i for i, r in enumerate(rows.tolist()))
    assert SupportIndex(np.empty((0, 3), dtype=np.intp)).get((0, 1, 2)) is None
