"""A cache of per-chapter analysis results keyed by content hash.

Results live in memory (an LRU of decoded objects, so a re-analysis after one edit costs dictionary look-ups)
and, optionally, in a small SQLite file under the user data folder, so reopening a novel does not redo jieba.
The cache never lives inside the novel file: it is derived data, and a novel is shared and backed up as is.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from novel_desktop.paths import user_data_dir

T = TypeVar("T")
log = logging.getLogger(__name__)

CACHE_FILE_NAME = "analysis-cache.sqlite"


def text_hash(text: str) -> str:
    """The sha256 of ``text`` (UTF-8), the key of everything computed from it."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class AnalysisCache:
    """Memory LRU in front of an optional SQLite file. Thread-safe; writes are batched until :meth:`flush`."""

    def __init__(self, path: Path | None = None, *, max_memory: int = 4096, max_rows: int = 50_000) -> None:
        self.path = path
        self.max_memory = max_memory
        self.max_rows = max_rows
        self._memory: OrderedDict[str, Any] = OrderedDict()
        self._pending: dict[str, str] = {}
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        if path is not None:
            self._db = self._open(path)

    @classmethod
    def default(cls) -> AnalysisCache:
        """The cache at ``user_data_dir()/analysis-cache.sqlite`` (memory only if that cannot be opened)."""
        return cls(user_data_dir() / CACHE_FILE_NAME)

    @staticmethod
    def _open(path: Path) -> sqlite3.Connection | None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(path, check_same_thread=False, timeout=5)
            db.execute("PRAGMA journal_mode=WAL")
            # Losing the last batch on a power cut only costs a recomputation.
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS results "
                "(key TEXT PRIMARY KEY, payload TEXT NOT NULL, used INTEGER NOT NULL DEFAULT 0)"
            )
            db.commit()
            return db
        except (OSError, sqlite3.Error) as exc:
            # A cache that cannot be written is not an error the author needs to see: analysis still works.
            log.warning("analysis cache unavailable at %s: %s", path, exc)
            return None

    def get(self, key: str, decode: Callable[[Any], T]) -> T | None:
        """The object stored under ``key``, or None; a disk entry is decoded with ``decode`` once."""
        with self._lock:
            if key in self._memory:
                self._memory.move_to_end(key)
                value: T = self._memory[key]
                return value
            payload = self._pending.get(key)
            if payload is None and self._db is not None:
                try:
                    row = self._db.execute("SELECT payload FROM results WHERE key = ?", (key,)).fetchone()
                except sqlite3.Error as exc:
                    log.warning("analysis cache read failed: %s", exc)
                    row = None
                payload = row[0] if row else None
        if payload is None:
            return None
        try:
            obj = decode(json.loads(payload))
        except (ValueError, KeyError, TypeError):
            # A row written by an older layout: recompute rather than fail.
            return None
        self._remember(key, obj)
        return obj

    def put(self, key: str, value: T, encode: Callable[[T], Any]) -> None:
        """Store ``value`` in memory now and on disk at the next :meth:`flush`."""
        self._remember(key, value)
        if self._db is not None:
            payload = json.dumps(encode(value), ensure_ascii=False, separators=(",", ":"))
            with self._lock:
                self._pending[key] = payload

    def _remember(self, key: str, value: Any) -> None:
        with self._lock:
            self._memory[key] = value
            self._memory.move_to_end(key)
            while len(self._memory) > self.max_memory:
                self._memory.popitem(last=False)

    def flush(self) -> None:
        """Write pending results to disk in one transaction and trim the file to ``max_rows``."""
        with self._lock:
            if self._db is None or not self._pending:
                self._pending.clear()
                return
            rows = list(self._pending.items())
            self._pending.clear()
            try:
                with self._db:
                    start = self._db.execute("SELECT COALESCE(MAX(used), 0) FROM results").fetchone()[0]
                    self._db.executemany(
                        "INSERT OR REPLACE INTO results (key, payload, used) VALUES (?, ?, ?)",
                        [(k, p, start + i + 1) for i, (k, p) in enumerate(rows)],
                    )
                    count = self._db.execute("SELECT COUNT(*) FROM results").fetchone()[0]
                    if count > self.max_rows:
                        self._db.execute(
                            "DELETE FROM results WHERE key IN "
                            "(SELECT key FROM results ORDER BY used LIMIT ?)",
                            (count - self.max_rows,),
                        )
            except sqlite3.Error as exc:
                log.warning("analysis cache write failed: %s", exc)

    def close(self) -> None:
        """Flush and close the file."""
        self.flush()
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


_shared_lock = threading.Lock()
_shared: AnalysisCache | None = None


def shared_cache() -> AnalysisCache:
    """The process's one cache in ``user_data_dir()`` (the file :meth:`AnalysisCache.default` opens).

    What analyses a novel without a cache of its own (the pipeline's style-drift and entity checks, the
    volume review) uses it, so a chapter is segmented once: not again at the next check, nor after the novel
    (or the app) is opened again. A new data folder (the tests switch it) gets a new cache.
    """
    global _shared
    path = user_data_dir() / CACHE_FILE_NAME
    with _shared_lock:
        if _shared is None or _shared.path != path:
            if _shared is not None:
                _shared.close()
            _shared = AnalysisCache(path)
        return _shared
