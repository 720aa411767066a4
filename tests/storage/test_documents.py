"""Documents by seed path and NOVEL_ASK answers."""

from __future__ import annotations

import pytest

from novel_desktop.storage.store import NovelStore, StoreError


def test_answers_are_stored_by_answer_path(store: NovelStore) -> None:
    path = "staging/novel-ask/chapter-048-draft.answers.json"
    store.put_answer(path, '{"version": 1}')
    assert store.answer(path) == '{"version": 1}'
    assert store.list_answers() == [path]
    store.delete_answer(path)
    assert store.answer(path) is None


def test_documents_only_take_seed_layout_paths(store: NovelStore) -> None:
    store.put_document("world/rules.json", '{"rules": []}')
    store.put_document("characters/active/lin-feng.json", "{}")
    assert store.list_documents("characters/") == ["characters/active/lin-feng.json"]
    with pytest.raises(StoreError):
        store.put_document("../etc/passwd", "x")
