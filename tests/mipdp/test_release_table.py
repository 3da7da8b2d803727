"""The releases of ``private_bss`` are those recorded before the plan-of-stages refactor.

Same ``random_state``, same data: the same supports (``n_draws=3``), guarantee string,
``result.epsilon`` and keys of ``result.info``, ``timings`` and ``stats``, across methods,
losses, bounds kinds, pre-screens and neighbour notions (``_release_table.py`` records the
table; a row changes only when a release changes deliberately).
"""

import json
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import _release_table as table  # noqa: E402

with open(table.TABLE) as _fh:
    RECORDED = json.load(_fh)

CONFIGS = table.configurations()


def test_every_configuration_is_recorded():
    assert sorted(RECORDED) == sorted(CONFIGS)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_release_is_unchanged(name):
    got = table.run(name, CONFIGS[name])
    want = {k: v for k, v in RECORDED[name].items() if k != "kwargs"}
    assert got["supports"] == want["supports"]
    assert got["guarantee"] == want["guarantee"]
    if want["epsilon"] is None:
        assert got["epsilon"] is None
    else:
        assert got["epsilon"] == pytest.approx(want["epsilon"], rel=1e-12)
    for key in ("info_keys", "timings_keys", "stats_keys"):
        assert got[key] == want[key], key
