"""One ledger file under two names (a hard link, a file-only bind mount) and the same
name: two separate Python programs race for the last share of its budget, and never
both win.  And the holder of a reservation is identified by boot, PID namespace and
start time, so a live holder in another PID namespace is never dropped as stale."""

import json
import os
import shutil
import sqlite3
import subprocess
import sys

import pytest

from mipdp import BudgetAccountant
from mipdp import ledger as ledger_mod

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:            # the programs import _ledger_workers by name
    sys.path.insert(0, HERE)
import _ledger_workers as workers  # noqa: E402


def _ledgers(directory, k):
    paths = []
    for i in range(k):
        p = str(directory / f"race{i}.sqlite")
        BudgetAccountant(1.0, path=p).spend(0.4)
        paths.append(p)
    return paths


def _race(tmp_path, paths_a, paths_b, dt=0.06):
    """Program A spends 0.6 through ``paths_a[i]``, program B through ``paths_b[i]``, at
    the same time (this process holds each file's write lock while both start).
    Returns (overspent, both won, neither won, tight races)."""
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    procs = [subprocess.Popen([sys.executable, workers.__file__, json.dumps(paths), str(barrier),
                               "2", str(dt), "0.6"], stdout=subprocess.PIPE, env=env)
             for paths in (paths_a, paths_b)]
    k = len(paths_a)
    starts = workers.barrier_starts(str(barrier), 2, k, dt, register=False)
    released = workers.hold_locks(paths_a, starts)
    a, b = [json.loads(p.communicate(timeout=60 + 2 * k * dt)[0]) for p in procs]
    both = sum(x[0] and y[0] for x, y in zip(a, b, strict=True))
    neither = sum(not x[0] and not y[0] for x, y in zip(a, b, strict=True))
    # an overspend: both won (1.0 + 0.2 released), or either name's total exceeds 1.0
    totals = [max(BudgetAccountant.open(pa).total().epsilon,
                  BudgetAccountant.open(pb).total().epsilon)
              for pa, pb in zip(paths_a, paths_b, strict=True)]
    overspent = sum(x[0] and y[0] or t > 1.0 + 1e-12
                    for x, y, t in zip(a, b, totals, strict=True))
    tight = sum(max(x[1], y[1]) < r for x, y, r in zip(a, b, released, strict=True))
    return overspent, both, neither, tight


def _hard_links(tmp_path, k):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    paths = _ledgers(tmp_path / "a", k)
    links = [str(tmp_path / "b" / f"link{i}.sqlite") for i in range(k)]
    for p, q in zip(paths, links, strict=True):
        os.link(p, q)
    return paths, links


def _check_hard_link(tmp_path, k):
    for attempt in range(3):        # a machine too loaded for any race to be tight: again
        work = tmp_path / f"try{attempt}"
        work.mkdir()
        paths, links = _hard_links(work, k)
        overspent, both, neither, tight = _race(work, paths, links)
        print(f"{k} races through a hard link: {overspent} overspent, {both} with two "
              f"winners, {neither} with none; both spends waited for the same lock release "
              f"in {tight}")
        assert (overspent, both, neither) == (0, 0, 0), (overspent, both, neither, tight)
        if tight >= 1:
            break
    assert tight >= 1
    for p, q in zip(paths, links, strict=True):     # one history under both names
        assert len(BudgetAccountant.open(p)) == len(BudgetAccountant.open(q)) == 2


def test_two_programs_race_through_a_hard_link(tmp_path):
    """The review's attack, 20 races (fails on the write-ahead-log ledger)."""
    _check_hard_link(tmp_path, 20)


@pytest.mark.slow
def test_two_programs_race_200_times_through_a_hard_link(tmp_path):
    _check_hard_link(tmp_path, 200)


def _bind_mounts(tmp_path, k):
    """``k`` ledgers and a file-only bind mount of each (skips when mount is refused)."""
    if not sys.platform.startswith("linux") or shutil.which("mount") is None:
        pytest.skip("file-only bind mounts need Linux and the mount command")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    paths = _ledgers(tmp_path / "a", k)
    mounts = []
    for i, p in enumerate(paths):
        q = str(tmp_path / "b" / f"mounted{i}.sqlite")
        open(q, "w").close()
        run = subprocess.run(["mount", "--bind", p, q], capture_output=True, text=True)
        if run.returncode != 0:
            _unmount(mounts)
            pytest.skip(f"cannot create a bind mount here (`mount --bind` needs root or "
                        f"CAP_SYS_ADMIN): {run.stderr.strip()}")
        mounts.append(q)
    return paths, mounts


def _unmount(mounts):
    for q in mounts:
        subprocess.run(["umount", "-l", q], capture_output=True)   # lazy: a connection may linger


def _check_bind_mount(tmp_path, k):
    for attempt in range(3):        # a machine too loaded for any race to be tight: again
        work = tmp_path / f"try{attempt}"
        work.mkdir()
        paths, mounts = _bind_mounts(work, k)
        try:
            assert os.stat(paths[0]).st_ino == os.stat(mounts[0]).st_ino
            assert os.stat(paths[0]).st_nlink == 1                     # not a hard link
            overspent, both, neither, tight = _race(work, paths, mounts)
            print(f"{k} races through a bind mount: {overspent} overspent, {both} with two "
                  f"winners, {neither} with none; tight {tight}")
            assert (overspent, both, neither) == (0, 0, 0), (overspent, both, neither, tight)
            assert all(len(BudgetAccountant.open(q)) == 2 for q in mounts)
        finally:
            _unmount(mounts)
        if tight >= 1:
            break
    assert tight >= 1


def test_two_programs_race_through_a_bind_mount(tmp_path):
    """``docker run -v /host/ledger.sqlite:/app/ledger.sqlite``: 20 races."""
    _check_bind_mount(tmp_path, 20)


@pytest.mark.slow
def test_two_programs_race_200_times_through_a_bind_mount(tmp_path):
    _check_bind_mount(tmp_path, 200)


def test_a_ledger_leaves_no_name_bound_side_files(tmp_path):
    """A rollback journal, not a write-ahead log: no ``-wal``/``-shm`` file, which SQLite
    would find by name, stays next to the ledger; an old ledger in WAL mode is converted
    when it is opened."""
    path = tmp_path / "l.sqlite"
    acc = BudgetAccountant(1.0, path=path)
    acc.spend(0.1)
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal"
    side = sorted(os.listdir(tmp_path))
    assert not any(n.endswith(("-wal", "-shm")) for n in side), side
    for name in side:                         # a truncated journal, empty between commits
        if name.endswith("-journal"):
            assert os.path.getsize(tmp_path / name) == 0
    old = tmp_path / "old.sqlite"
    BudgetAccountant(1.0, path=old).spend(0.2)
    conn = sqlite3.connect(old)
    assert conn.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal"
    conn.close()
    reopened = BudgetAccountant.open(old)
    assert reopened.total().epsilon == pytest.approx(0.2)
    reopened.spend(0.1)
    with sqlite3.connect(old) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal"


# -- who holds a reservation ----------------------------------------------------------------
def _holder_rows(path):
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT token, pid, host FROM reservations").fetchall()


def test_this_process_is_identified_by_boot_namespace_and_start_time():
    me = ledger_mod._holder(os.getpid())
    assert me["pid"] == os.getpid()
    if os.path.exists("/proc/self/stat"):
        assert me["boot"] and me["pidns"] and me["start"]
        with open("/proc/sys/kernel/random/boot_id") as f:
            assert me["boot"] == f.read().strip()
        assert me["pidns"] == str(os.stat("/proc/self/ns/pid").st_ino)


@pytest.mark.parametrize("change", ["pidns", "boot", "host"])
def test_a_holder_elsewhere_is_never_dropped_as_stale(tmp_path, change):
    """A reservation made in another PID namespace (a container with the same host name),
    after another boot, or on another host, by a pid that is dead *here*: it is kept
    (its holder may be alive where it runs), so the victim's release is not thrown away."""
    path = tmp_path / "l.sqlite"
    acc = BudgetAccountant(1.0, path=path)
    held = acc.reserve(0.5, method="victim")         # noqa: F841 (kept: not cancelled)
    dead = _dead_pid()
    holder = dict(ledger_mod._holder(os.getpid()), pid=dead)
    holder[change] = "elsewhere" if change != "pidns" else "4026530000"
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE reservations SET pid = ?, host = ?",
                     (dead, ledger_mod._holder_text(holder)))
    other = BudgetAccountant.open(path)
    assert other.remaining()[0] == pytest.approx(0.5)        # still counted
    assert len(_holder_rows(path)) == 1


def test_a_dead_holder_here_or_a_reused_pid_is_dropped(tmp_path):
    """Same boot and PID namespace: a dead pid, or a live pid whose start time differs
    (the pid was reused by another process), is stale and dropped; the record of a
    legacy ledger (the host name alone) is dropped when its pid is dead here."""
    path = tmp_path / "l.sqlite"
    acc = BudgetAccountant(1.0, path=path)
    kept = [acc.reserve(0.5, method="dead"), acc.reserve(0.2, method="reused pid"),  # noqa: F841
            acc.reserve(0.1, method="legacy")]
    dead = _dead_pid()
    me = ledger_mod._holder(os.getpid())
    reused = dict(me, pid=os.getppid(), start="1")            # alive, other start time
    with sqlite3.connect(path) as conn:
        (t1, _, _), (t2, _, _), (t3, _, _) = conn.execute(
            "SELECT token, pid, host FROM reservations ORDER BY time").fetchall()
        conn.execute("UPDATE reservations SET pid = ?, host = ? WHERE token = ?",
                     (dead, ledger_mod._holder_text(dict(me, pid=dead)), t1))
        conn.execute("UPDATE reservations SET pid = ?, host = ? WHERE token = ?",
                     (os.getppid(), ledger_mod._holder_text(reused), t2))
        conn.execute("UPDATE reservations SET pid = ?, host = ? WHERE token = ?",
                     (dead, ledger_mod._HOST, t3))
    other = BudgetAccountant.open(path)
    if me["start"]:
        assert other.remaining()[0] == pytest.approx(1.0)
        assert _holder_rows(path) == []
    # a live holder of this namespace (this process) is kept
    held = other.reserve(0.3)
    assert BudgetAccountant.open(path).remaining()[0] == pytest.approx(0.7)
    held.cancel()


def _dead_pid():
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid
