"""mipdp.enumeration.cuts: the cut store and its row buffer."""

from __future__ import annotations

import numpy as np

from mipdp.enumeration.cuts import CutStore, RowStack


def test_row_stack_appends_and_views_stay_valid():
    rs = RowStack(3)
    assert rs.array.shape == (0, 3) and len(rs) == 0
    rows = [np.arange(3.0) + 10 * t for t in range(40)]     # grows the buffer twice
    views = []
    for t, r in enumerate(rows):
        rs.append(r)
        views.append(rs.array)
        np.testing.assert_array_equal(rs.array, np.vstack(rows[:t + 1]))
    for t, v in enumerate(views):                          # earlier views: earlier rows
        np.testing.assert_array_equal(v, np.vstack(rows[:t + 1]))
    rows[0][:] = -1.0                                      # the stack holds copies
    assert rs[0][0] == 0.0 and rs[-1][2] == rows[-1][2]


def test_store_arrays_and_bounds():
    store = CutStore(5, 2)
    rng = np.random.default_rng(0)
    gs = [-rng.random(5) for _ in range(3)]
    for t, g in enumerate(gs):
        store.add(np.array([t, t + 1]), 1.0 + t, g)
    a, G = store.arrays
    np.testing.assert_array_equal(G, np.vstack(gs))
    np.testing.assert_allclose(a, [1.0 + t - gs[t][[t, t + 1]].sum() for t in range(3)])
    S = np.array([[0, 4], [2, 3]])
    np.testing.assert_allclose(store.bounds(S), np.max(a[:, None] + G[:, S].sum(-1), axis=0))
