"""Persistence: restart reloads objects, rvs and the counter; kill -9 keeps every flushed batch."""

from __future__ import annotations

import gc
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from pykueue.api.meta.errors import Gone
from pykueue.store import Store, StoreFileError, checkpoint
from pykueue.store import sqlite as sqlite_backend
from pykueue.testing.builders.raw_specs import bare_cluster_queue as cq
from pykueue.testing.builders.raw_specs import pod

from .object_reads import names

CQ = "clusterqueues.kueue.x-k8s.io"


def test_restart_reloads_objects_rvs_and_counter(tmp_path: Path) -> None:
    path = str(tmp_path / "s.db")
    with Store(path) as store:
        store.create("pods", pod("a", "ns", app="web"))
        store.create(CQ, cq("q"))
        store.update("pods", pod("a", "ns", app="db"), expected_rv="1")
        store.create("pods", pod("gone"))
        store.delete("pods", "default", "gone")  # rv 5: the newest rv belongs to a deleted object
        before = store.list("pods").items + store.list(CQ).items
    with Store(path) as store:
        assert store.resource_version == 5
        assert store.list("pods").items + store.list(CQ).items == before
        assert store.get("pods", "ns", "a")["metadata"]["resourceVersion"] == "3"
        assert names(store.list("pods", label_selector="app=db").items) == ["a"]
        assert store.create("pods", pod("new"))["metadata"]["resourceVersion"] == "6"
        with pytest.raises(Gone):
            store.events_since("pods", 4)
        assert store.events_since("pods", 5)[0].resource_version == 6


def test_restart_after_deleting_everything_never_reuses_rvs(tmp_path: Path) -> None:
    path = str(tmp_path / "s.db")
    with Store(path) as store:
        for i in range(3):
            store.create("pods", pod(f"p{i}"))
        for i in range(3):
            store.delete("pods", "default", f"p{i}")
    with Store(path) as store:
        assert store.list("pods").items == []
        assert store.resource_version == 6
        assert store.create("pods", pod("p0"))["metadata"]["resourceVersion"] == "7"


def test_unflushed_writes_are_lost_on_reopen_but_flushed_ones_stay(tmp_path: Path) -> None:
    path = str(tmp_path / "s.db")
    store = Store(path, auto_flush=False)
    store.create("pods", pod("a"))
    store.update("pods", pod("a", v="2"), expected_rv=None)  # coalesces with the create
    store.flush()
    store.create("pods", pod("b"))
    with Store(path) as other:  # a second process's view: only the committed batch
        assert names(other.list("pods").items) == ["a"]
        assert other.get("pods", "default", "a")["metadata"] == {
            "name": "a",
            "namespace": "default",
            "labels": {"v": "2"},
            "resourceVersion": "2",
        }
        assert other.resource_version == 2
    store.close()  # close flushes
    with Store(path) as store2:
        assert names(store2.list("pods").items) == ["a", "b"]


def test_continue_token_from_before_restart_is_gone(tmp_path: Path) -> None:
    path = str(tmp_path / "s.db")
    with Store(path) as store:
        for i in range(3):
            store.create("pods", pod(f"p{i}"))
        token = store.list("pods", limit=1).continue_token
        store.create("pods", pod("p3"))
    assert token is not None
    with Store(path) as store, pytest.raises(Gone):
        store.list("pods", limit=1, continue_token=token)


@pytest.fixture
def no_busy_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sqlite_backend, "BUSY_TIMEOUT_S", 0.0)


@pytest.mark.usefixtures("no_busy_wait")
def test_failed_commit_with_auto_flush_changes_nothing(tmp_path: Path) -> None:
    path = str(tmp_path / "s.db")
    store = Store(path)
    store.create("pods", pod("a", v="1"))
    seen: list[int] = []
    store.subscribe(lambda e: seen.append(e.resource_version))
    locker = sqlite3.connect(path, isolation_level=None, timeout=0)
    locker.execute("BEGIN IMMEDIATE")  # another writer holds the lock: our commit fails
    try:
        for write in (
            lambda: store.create("pods", pod("b")),
            lambda: store.update("pods", pod("a", v="2"), expected_rv="1"),
            lambda: store.delete("pods", "default", "a"),
        ):
            with pytest.raises(sqlite3.OperationalError):
                write()
            assert store.resource_version == 1
            assert names(store.list("pods").items) == ["a"]
            assert store.get("pods", "default", "a")["metadata"]["labels"] == {"v": "1"}
            assert store.events_since("pods", 0)[-1].resource_version == 1
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    assert seen == []
    assert store.update("pods", pod("a", v="3"), expected_rv="1")["metadata"]["resourceVersion"] == "2"
    assert seen == [2]
    store.close()


@pytest.mark.usefixtures("no_busy_wait")
def test_failed_flush_keeps_batch_pending_for_retry(tmp_path: Path) -> None:
    path = str(tmp_path / "s.db")
    store = Store(path, auto_flush=False)
    store.create("pods", pod("a"))
    seen: list[int] = []
    store.subscribe(lambda e: seen.append(e.resource_version))
    locker = sqlite3.connect(path, isolation_level=None, timeout=0)
    locker.execute("BEGIN IMMEDIATE")
    with pytest.raises(sqlite3.OperationalError):
        store.flush()
    locker.execute("ROLLBACK")
    locker.close()
    assert seen == []
    store.flush()
    assert seen == [1]
    store.close()
    with Store(path) as reopened:
        assert names(reopened.list("pods").items) == ["a"]


def test_not_a_database_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "junk.db"
    bad.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreFileError, match="cannot open the store"):
        Store(str(bad))


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = str(tmp_path / "s.db")
    Store(path).close()
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value = 99 WHERE key = 'schema'")
    db.commit()
    db.close()
    with pytest.raises(StoreFileError, match="newer"):
        Store(path)


def test_database_uses_wal(tmp_path: Path) -> None:
    path = str(tmp_path / "s.db")
    Store(path).close()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.close()


# --------------------------------------------------------------------------- kill -9

_WRITER = textwrap.dedent("""
    import os, signal, sys
    from pykueue.store import Store
    path, mode = sys.argv[1], sys.argv[2]
    store = Store(path, auto_flush=False)
    if mode == "deterministic":
        for i in range(50):
            store.create("pods", {"metadata": {"name": f"p{i}", "namespace": "ns"}})
        for i in range(0, 50, 2):
            store.delete("pods", "ns", f"p{i}")
        store.flush()
        for i in range(50, 60):
            store.create("pods", {"metadata": {"name": f"p{i}", "namespace": "ns"}})  # never flushed
        os.kill(os.getpid(), signal.SIGKILL)
    else:  # racing: flush batches forever, report each durable batch, get killed at any moment
        i = 0
        while True:
            for _ in range(20):
                store.create("pods", {"metadata": {"name": f"p{i:06d}", "namespace": "ns"},
                                      "spec": {"pad": "x" * 200}})
                i += 1
            store.flush()
            print(i, flush=True)
""")


def _run_writer(tmp_path: Path, mode: str) -> subprocess.Popen[str]:
    script = tmp_path / "writer.py"
    script.write_text(_WRITER)
    return subprocess.Popen(
        [sys.executable, str(script), str(tmp_path / "s.db"), mode], stdout=subprocess.PIPE, text=True
    )


def _integrity_ok(path: Path) -> bool:
    db = sqlite3.connect(str(path))
    try:
        return bool(db.execute("PRAGMA integrity_check").fetchone()[0] == "ok")
    finally:
        db.close()


def test_kill_9_after_flush_keeps_flushed_batch(tmp_path: Path) -> None:
    with _run_writer(tmp_path, "deterministic") as proc:
        proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert _integrity_ok(tmp_path / "s.db")
    with Store(str(tmp_path / "s.db")) as store:
        assert names(store.list("pods").items) == sorted(f"p{i}" for i in range(1, 50, 2))
        assert store.resource_version == 75
        assert store.create("pods", pod("after"))["metadata"]["resourceVersion"] == "76"


def test_kill_9_at_a_random_moment_never_corrupts(tmp_path: Path) -> None:
    with _run_writer(tmp_path, "racing") as proc:
        assert proc.stdout is not None
        durable = 0
        for _ in range(25):  # let it flush a few batches, then kill it mid-stream
            durable = int(proc.stdout.readline())
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
    assert _integrity_ok(tmp_path / "s.db")
    with Store(str(tmp_path / "s.db")) as store:
        items = store.list("pods").items
        assert len(items) >= durable  # every reported batch survived; maybe one more did
        assert len(items) % 20 == 0  # whole batches only
        assert names(items) == [f"p{i:06d}" for i in range(len(items))]
        assert store.resource_version == len(items)


# --------------------------------------------------------------------------- WAL checkpoints


def _checkpoint_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("store-checkpoint:")]


def test_background_checkpoints_fold_the_wal_and_stop_on_close(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(checkpoint, "WAL_LIMIT_BYTES", 20_000)
    path = tmp_path / "s.db"
    store = Store(str(path), auto_flush=False)
    assert _checkpoint_threads() == []  # started lazily
    for batch in range(20):
        for i in range(10):
            store.create("pods", {**pod(f"p{batch}-{i}"), "spec": {"pad": "x" * 1000}})
        store.flush()
    assert len(_checkpoint_threads()) == 1
    deadline = 200
    while os.path.getsize(str(path)) < 100_000 and deadline:  # the checkpoints reach the main file
        threading.Event().wait(0.05)
        deadline -= 1
    assert os.path.getsize(str(path)) >= 100_000
    store.close()
    assert _checkpoint_threads() == []
    assert not Path(str(path) + "-wal").exists() or Path(str(path) + "-wal").stat().st_size == 0
    with Store(str(path)) as reopened:
        assert len(reopened.list("pods").items) == 200


def test_unclosed_store_ends_its_checkpoint_thread_when_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(checkpoint, "WAL_LIMIT_BYTES", 1)
    store = Store(str(tmp_path / "s.db"))
    store.create("pods", pod("a"))
    assert len(_checkpoint_threads()) == 1
    del store
    gc.collect()
    assert _checkpoint_threads() == []


# --------------------------------------------------------------------------- one writer per file


def test_second_writer_on_the_same_file_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    path = str(tmp_path / "s.db")
    first = Store(path)
    second = Store(path)  # opening (and reading) is fine
    first.create("pods", pod("a"))
    with pytest.raises(StoreFileError, match=r"cannot write: in use by another store \(pid \d+\)"):
        second.create("pods", pod("b"))
    assert second.list("pods").items == []
    assert second.resource_version == 0
    first.close()
    with pytest.raises(StoreFileError, match="another store wrote to the file since this one loaded it"):
        second.create("pods", pod("b"))  # its index is stale: writing would undo "a"
    second.close()
    with Store(path) as reopened:
        assert names(reopened.list("pods").items) == ["a"]
        reopened.create("pods", pod("b"))


def test_lock_is_released_on_close_and_by_a_killed_process(tmp_path: Path) -> None:
    path = str(tmp_path / "s.db")
    with Store(path) as store:
        store.create("pods", pod("a"))
    with Store(path) as store:
        store.create("pods", pod("b"))
    with _run_writer(tmp_path, "deterministic") as proc:  # writes, flushes, then dies by SIGKILL
        proc.wait(timeout=60)
    with Store(str(tmp_path / "s.db")) as store:
        store.create("pods", pod("after-kill"))


def test_reader_only_store_takes_no_lock(tmp_path: Path) -> None:
    path = str(tmp_path / "s.db")
    with Store(path) as writer:
        writer.create("pods", pod("a"))
        with Store(path) as reader:
            assert names(reader.list("pods").items) == ["a"]
        writer.create("pods", pod("b"))
