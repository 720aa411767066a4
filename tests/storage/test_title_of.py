"""``title_of``: a chapter's title from its text, in linear time whatever the line holds."""

from __future__ import annotations

import pytest

from novel_desktop.storage.store import NovelStore, title_of
from tests.storage.staging import stage_chapter


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("# 第1章 入山\n\n正文", "第1章 入山"),
        ("\n\n  ##   第2章 下山  \n正文", "第2章 下山"),
        ("第3章 无标记\n正文", "第3章 无标记"),
        ("####### 七个井号", "# 七个井号"),
        ("#\n正文", "#"),
        ("", ""),
        ("   \n\t\n", ""),
        ("# " + "长" * 100, "长" * 80),
    ],
)
def test_the_title_is_the_first_heading_or_the_first_line(text: str, title: str) -> None:
    assert title_of(text) == title


@pytest.mark.timeout(60)
def test_a_heading_with_a_long_run_of_spaces_returns() -> None:
    # The old pattern (.+?)\s*$ backtracked on such a line and hung the commit of an imported manuscript.
    line = "# 第1章 开端" + " " * 200_000 + "尾"
    assert title_of(line + "\n正文") == ("第1章 开端" + " " * 200_000)[:80]
    assert title_of("#" + " " * 200_000 + "x") == "x"
    assert title_of(" " * 200_000 + "\n第2章") == "第2章"


@pytest.mark.timeout(60)
def test_a_chapter_with_such_a_heading_commits(store: NovelStore) -> None:
    text = "# 第1章 开端" + " " * 200_000 + "尾\n\n　　正文。\n"
    stage_chapter(store, 1, text)
    store.commit_chapter(1)
    assert store.chapter_text(1) == text
    assert store.list_chapters()[0].title.startswith("第1章 开端")
