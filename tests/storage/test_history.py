"""The novel's past (schema 2): every document change is kept, each commit leaves its chapter's point, and the
documents as they were when a chapter was written or right after it can be read back."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from novel_desktop.storage import layout
from novel_desktop.storage.store import NovelStore, content_hash
from tests.storage.staging import stage_chapter


def test_a_commit_leaves_a_point_with_the_documents_before_and_after_it(store: NovelStore) -> None:
    store.put_document("world/rules.json", '{"rules": []}')
    stage_chapter(store, 1, "第一章 林风入山。")
    store.put_staging(layout.memory_path("main"), "林风入山。", chapter=1)
    store.commit_chapter(1)
    store.put_document(layout.memory_path("main"), "作者改过的记忆")
    stage_chapter(store, 2, "第二章 林风拜师。")
    store.put_staging(layout.memory_path("main"), "林风入山，拜师。", chapter=2)
    store.commit_chapter(2)

    one, two = store.chapter_point(1), store.chapter_point(2)
    assert one is not None and two is not None
    assert (one.kind, one.checkpoint["last_completed_chapter"]) == ("commit", 1)
    assert store.document_at(layout.memory_path("main"), one.docs_before) is None
    assert store.document_at(layout.memory_path("main"), one.docs_after) == "林风入山。"
    # Chapter 2 was written from the author's edit of the memory, made between the two commits.
    assert store.documents_at(two.docs_before, "storylines/") == {
        layout.memory_path("main"): "作者改过的记忆"
    }
    assert store.documents_at(two.docs_after)[layout.memory_path("main")] == "林风入山，拜师。"
    assert store.documents_at(two.docs_after)["world/rules.json"] == '{"rules": []}'
    assert store.chapter_point(3) is None


def test_deleting_a_document_is_history_too(store: NovelStore) -> None:
    store.put_document("world/rules.json", "旧")
    before = store.history_position()
    store.put_documents({}, delete=["world/rules.json"])
    assert store.document_at("world/rules.json", before) == "旧"
    assert store.document_at("world/rules.json", store.history_position()) is None
    assert "world/rules.json" not in store.documents_at(store.history_position())


def test_a_committed_chapter_remembers_the_text_its_state_came_from(store: NovelStore) -> None:
    stage_chapter(store, 1, "正文一")
    store.commit_chapter(1)
    stage_chapter(store, 2, "正文二")
    store.commit_chapter(2, status="needs_rebuild")
    with sqlite3.connect(store.path) as con:
        rows = dict(con.execute("SELECT number, source_hash FROM chapters").fetchall())
    assert rows == {1: content_hash("正文一"), 2: ""}


def test_a_schema_1_file_is_upgraded_with_its_documents_as_the_first_history(tmp_path: Path) -> None:
    path = tmp_path / "old.novel"
    NovelStore.create(path, title="旧书").close()
    con = sqlite3.connect(path)  # make it what schema 1's program wrote
    con.executescript(
        "DROP TRIGGER documents_history_insert; DROP TRIGGER documents_history_update;"
        "DROP TRIGGER documents_history_delete; DROP TABLE document_history; DROP TABLE chapter_points;"
        "DROP TABLE model_calls; DROP TABLE archived_chapters; ALTER TABLE chapters DROP COLUMN source_hash;"
        "INSERT INTO documents(path, content, updated_at) VALUES ('brief.md', '简介', 'x');"
        "INSERT INTO chapters(number, volume, title, status, chars, content_hash, committed_at, updated_at)"
        " VALUES (1, 1, '', 'committed', 2, 'h1', '', ''), (2, 1, '', 'needs_rebuild', 2, 'h2', '', '');"
        "UPDATE meta SET value = '1' WHERE key = 'schema_version';"
    )
    con.commit()
    con.close()
    with NovelStore.open(path) as store:
        assert store.meta()["schema_version"] == "2"
        assert store.document_at("brief.md", store.history_position()) == "简介"
        store.put_document("brief.md", "新简介")
        assert store.document_at("brief.md", store.history_position() - 1) == "简介"
    with sqlite3.connect(path) as con:
        assert dict(con.execute("SELECT number, source_hash FROM chapters")) == {1: "h1", 2: ""}
