"""SQLite persistence for the store: write-behind, one transaction per batch.

Owned by ``store/``; only :class:`pykueue.store.Store` calls it, from the event-loop thread
(stdlib ``sqlite3`` called directly: a commit of a batch takes well under a millisecond, so
hopping to a thread pool would cost more than it saves). The fsyncs of WAL checkpoints, which
do take milliseconds, run on a background thread (:mod:`pykueue.store.checkpoint`).

Invariants:
- the database holds, per key, the newest *committed* body and its rv, plus the global rv counter
  (``meta.rv``), so a restart never reuses an rv, even one whose object was deleted since;
- a batch is applied in one transaction: after a crash the database is the state of some
  committed batch, never half of one (WAL mode).
- durability is the caller's choice (:data:`DURABILITY`): ``fsync`` (``synchronous=FULL``) fsyncs
  the WAL at every commit, so a committed batch survives power loss and OS crashes too; ``os``
  (``synchronous=NORMAL``) leaves it to the OS: every committed batch survives a process crash,
  ``kill -9`` included, but an OS crash or power loss can drop the newest batches (WAL still
  recovers to a consistent earlier state). The store commits once per event-loop tick, so one
  fsync covers every write of that tick (group commit).
"""

from __future__ import annotations

import contextlib
import sqlite3
import weakref

from pykueue.store.checkpoint import Checkpointer
from pykueue.store.filelock import FileLock

__all__ = ["DURABILITY", "SqliteBackend", "StoreFileError"]

DURABILITY = {"fsync": "FULL", "os": "NORMAL"}
"""The ``--durability`` modes and the SQLite ``synchronous`` setting each one means."""

_SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS objects (
    resource  TEXT    NOT NULL,
    namespace TEXT    NOT NULL,
    name      TEXT    NOT NULL,
    rv        INTEGER NOT NULL,
    body      BLOB    NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS objects_key ON objects (resource, namespace, name);
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value INTEGER NOT NULL
);
"""
# A rowid table plus a unique key index, written with an upsert that updates the row in place:
# measured ~4x faster for updates than INSERT OR REPLACE into a WITHOUT ROWID table (bodies of
# ~1 KB are too large for WITHOUT ROWID's clustered leaves; REPLACE deletes and re-inserts).
_UPSERT = (
    "INSERT INTO objects VALUES (?, ?, ?, ?, ?) ON CONFLICT (resource, namespace, name) "
    "DO UPDATE SET rv = excluded.rv, body = excluded.body"
)
_DELETE = "DELETE FROM objects WHERE resource = ? AND namespace = ? AND name = ?"

BUSY_TIMEOUT_S = 5.0
"""How long a commit waits for another connection's write lock before failing (we are normally
the only writer, so a wait means someone else opened the file for writing)."""

Row = tuple[str, str, str, int, bytes]
"""(resource, namespace, name, rv, body)."""


class StoreFileError(RuntimeError):
    """The store file cannot be used (not SQLite, newer schema, unreadable, or in use by another
    store): check the path, and that no other pykueue process uses the same data directory."""


class SqliteBackend:
    def __init__(self, path: str, *, durability: str = "fsync") -> None:
        if durability not in DURABILITY:
            raise ValueError(f"durability {durability!r}: use {' or '.join(map(repr, DURABILITY))}")
        self._path = path
        self._synchronous = DURABILITY[durability]
        try:
            self._db = sqlite3.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT_S)
        except sqlite3.Error as err:
            raise StoreFileError(f"{path}: cannot open the store: {err}") from err
        try:
            self._prepare()
        except (sqlite3.Error, StoreFileError) as err:
            self._db.close()
            if isinstance(err, StoreFileError):
                raise
            raise StoreFileError(f"{path}: cannot open the store: {err}") from err
        self._checkpointer = Checkpointer(path)
        self._loaded_rv = 0
        self._locks: list[FileLock] = []
        """The writer's lock, taken at the first commit (a store that only reads never takes it)."""
        # A store dropped without close() still ends its thread and frees the file.
        self._finalizer = weakref.finalize(self, _release, self._checkpointer, self._locks)

    @property
    def synchronous(self) -> str:
        """SQLite's ``synchronous`` setting in force on this connection (``FULL`` or ``NORMAL``)."""
        level = int(self._db.execute("PRAGMA synchronous").fetchone()[0])
        return {1: "NORMAL", 2: "FULL"}.get(level, str(level))

    def _prepare(self) -> None:
        db = self._db
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(f"PRAGMA synchronous={self._synchronous}")
        db.execute("PRAGMA wal_autocheckpoint=0")  # the Checkpointer thread does it, off the loop
        # 16 MiB page cache (default 2 MiB) keeps the key index of ~100k objects in memory: measured
        # ~20% faster batched updates at that size; reads never come here.
        db.execute("PRAGMA cache_size=-16384")
        db.executescript(_SCHEMA)
        version = self._meta("schema")
        if version is None:
            db.execute("INSERT INTO meta VALUES ('schema', ?)", (_SCHEMA_VERSION,))
        elif version > _SCHEMA_VERSION:
            raise StoreFileError(
                f"{self._path}: store schema {version} is newer than this pykueue understands ({_SCHEMA_VERSION})"
            )

    def _meta(self, key: str) -> int | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else int(row[0])

    def load(self) -> tuple[int, list[Row]]:
        """The persisted rv counter and every stored object, read in one consistent snapshot."""
        self._db.execute("BEGIN")
        try:
            self._loaded_rv = rv = self._meta("rv") or 0
            rows = self._db.execute("SELECT resource, namespace, name, rv, body FROM objects").fetchall()
        finally:
            self._db.execute("COMMIT")
        return rv, rows

    def commit(self, upserts: list[Row], deletes: list[tuple[str, str, str]], rv: int) -> None:
        """Apply one batch atomically; on any error nothing of it is applied and the error raises."""
        if not self._locks:
            self._become_writer()
        db = self._db
        db.execute("BEGIN")
        try:
            db.executemany(_UPSERT, upserts)
            db.executemany(_DELETE, deletes)
            db.execute("INSERT OR REPLACE INTO meta VALUES ('rv', ?)", (rv,))
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        # WAL growth, roughly: the bodies plus a share of each touched B-tree page.
        self._checkpointer.after_commit(
            4096 + sum(len(row[4]) for row in upserts) + 512 * (len(upserts) + len(deletes))
        )

    def claim_writer(self) -> None:
        """Take the writer's lock now instead of at the first commit (a server claims its data dir at
        start-up, so a second one fails before serving anything)."""
        if not self._locks:
            self._become_writer()

    def _become_writer(self) -> None:
        """Take the writer's lock, and refuse if another writer changed the file since we loaded it
        (our in-memory index would be stale: writing would silently undo its work)."""
        try:
            lock = FileLock(self._path)
        except OSError as err:
            raise StoreFileError(f"{self._path}: cannot write: {err}") from err
        on_disk = self._meta("rv") or 0
        if on_disk != self._loaded_rv:
            lock.release()
            raise StoreFileError(
                f"{self._path}: cannot write: another store wrote to the file since this "
                f"one loaded it (resourceVersion {on_disk}, loaded {self._loaded_rv}); "
                "reopen the store"
            )
        self._locks.append(lock)

    def close(self) -> None:
        """Stop the checkpointer and fold the WAL into the database file (a tidy file on disk)."""
        self._checkpointer.stop()
        if self._locks:  # the writer folds the WAL; a reader leaves it to the writer
            with contextlib.suppress(sqlite3.Error):  # a reader elsewhere: the WAL stays
                self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        self._db.close()
        self._finalizer()


def _release(checkpointer: Checkpointer, locks: list[FileLock]) -> None:
    checkpointer.stop()
    for lock in locks:
        lock.release()
