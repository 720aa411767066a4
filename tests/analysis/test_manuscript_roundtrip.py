"""A book exported by the app imports back: the chapters, their volumes and their text survive the round trip."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from novel_desktop.analysis.manuscript import read_manuscript, split_manuscript
from novel_desktop.storage import layout
from novel_desktop.storage.book_export import export_book, load_book
from novel_desktop.storage.store import NovelStore, dumps


def _prose(rng: random.Random, sentences: int) -> str:
    pool = [chr(c) for c in range(0x4E00, 0x4E00 + 3000)]
    return "".join("".join(rng.choices(pool, k=rng.randint(8, 30))) + "。" for _ in range(sentences))


@pytest.fixture
def long_novel(store: NovelStore) -> NovelStore:
    rng = random.Random(17)
    for n in range(1, 9):
        paragraphs = [_prose(rng, rng.randint(2, 12)) for _ in range(rng.randint(5, 30))]
        text = f"# 第{n}章 第{n}回的标题\n\n" + "\n\n".join("　　" + p for p in paragraphs) + "\n"
        store.put_staging(layout.chapter_path(n), text, kind="refined")
        store.commit_chapter(n, volume=1 if n <= 4 else 2)
    store.put_document(layout.volume_info_path(1), dumps({"volume": 1, "title": "风起"}))
    store.put_document(layout.volume_info_path(2), dumps({"volume": 2, "title": "出山"}))
    return store


@pytest.mark.parametrize("fmt", ["docx", "epub", "txt"])
def test_an_exported_novel_imports_back_with_its_chapters_and_text(
    long_novel: NovelStore, tmp_path: Path, fmt: str
) -> None:
    if fmt == "docx":
        # A paragraph over libxml2's 10 MB text-node limit ("Text node too long" when read by python-docx).
        huge = "　　" + _prose(random.Random(5), 180_000)
        long_novel.put_staging(layout.chapter_path(9), f"# 第9章 长段\n\n{huge}\n", kind="refined")
        long_novel.commit_chapter(9, volume=2)
        assert len(huge.encode("utf-8")) > 10 * 1024 * 1024
    out = tmp_path / f"导出.{fmt}"
    export_book(long_novel, out, fmt)
    book = load_book(long_novel)

    result = split_manuscript(read_manuscript(out).text)
    assert [(c.number, c.title, c.volume) for c in result.chapters] == [
        (c.number, c.title, 1 if c.number <= 4 else 2) for c in book.chapters
    ]
    assert [(v.number, v.title) for v in result.volumes] == [(1, "风起"), (2, "出山")]
    for imported, exported in zip(result.chapters, book.chapters, strict=True):
        lines = [line.strip("\u3000") for line in imported.text.splitlines() if line.strip()]
        assert lines == exported.paragraphs, exported.title
    assert result.duplicates == [] and result.gaps == []
