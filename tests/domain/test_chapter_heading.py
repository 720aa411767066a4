"""A stored chapter taken apart into its heading label, title and body, and put back together."""

from __future__ import annotations

import pytest

from novel_desktop.domain.chapter_heading import body_of, join_heading, split_heading
from novel_desktop.storage.store import NovelStore

SHAPES = [
    "# 第六章 药篓\n\n\u3000\u3000正文。\n",
    "# 第6章\n\n正文",
    "正文没有标题行。\n",
    "# 楔子\n\n开头。",
    "\n## 第 12 章：风起\n\n\n\u3000\u3000甲\n",
    "# 第一章 药篓里的残玉   \n正文",
    "# 第二回 只有标题\n",
    "",
]


@pytest.mark.parametrize("text", SHAPES)
def test_nothing_changed_gives_the_stored_text_back_byte_for_byte(text: str) -> None:
    parts = split_heading(text, 3)
    assert join_heading(parts, parts.title, parts.body) == text
    assert not parts.body.startswith("#")


def test_the_label_is_fixed_and_the_title_is_what_follows_it() -> None:
    parts = split_heading("# 第六章 药篓\n\n\u3000\u3000正文。\n", 6)
    assert (parts.label, parts.title, parts.body) == ("第六章", "药篓", "\u3000\u3000正文。\n")
    assert split_heading("## 第 12 章：风起\n\n甲").label == "第12章"
    assert split_heading("# 楔子\n\n开头。", 1).label == ""
    assert split_heading("没有标题。", 4).label == "第4章"  # the label a new heading would get


def test_a_renamed_chapter_keeps_its_heading_form_and_its_body() -> None:
    text = "# 第六章 药篓\n\n\u3000\u3000正文。\n"
    assert (
        join_heading(split_heading(text), "残玉", "\u3000\u3000正文。\n")
        == "# 第六章 残玉\n\n\u3000\u3000正文。\n"
    )
    assert join_heading(split_heading("# 第6章\n\n正文"), "新", "正文") == "# 第6章 新\n\n正文"
    assert join_heading(split_heading("# 第6章 旧\n\n正文"), "", "正文") == "# 第6章\n\n正文"
    assert join_heading(split_heading("正文。", 4), "开端", "正文。") == "# 第4章 开端\n\n正文。"
    assert join_heading(split_heading("# 楔子\n\n开头。"), "", "开头。") == "开头。"
    # A title typed with a line break stays on the heading line.
    assert join_heading(split_heading("# 第1章 旧\n\n正文"), "上\n下", "正文") == "# 第1章 上 下\n\n正文"


def test_body_of_ignores_the_heading_line() -> None:
    assert body_of("# 第1章 旧\n\n正文") == body_of("# 第1章 新\n\n正文") == "正文"
    assert body_of("# 第1章 旧\n\n正文") != body_of("# 第1章 旧\n\n正文。")


def test_a_title_only_edit_is_a_revision_that_marks_nothing_stale(seed_store: NovelStore) -> None:
    text = seed_store.chapter_text(1) or ""
    assert seed_store.stale_chapters() == []
    renamed = text.replace("# 第一章 药篓里的残玉", "# 第一章 残玉", 1)
    assert seed_store.save_manual_edit(1, renamed) == []
    assert seed_store.chapter_text(1) == renamed
    assert [r.kind for r in seed_store.revisions(1)][-1] == "manual"
    assert seed_store.list_chapters()[0].title == "第一章 残玉"
    assert seed_store.stale_chapters() == []
    # A body edit still marks the chapter and those after it.
    assert seed_store.save_manual_edit(1, renamed + "又一句。") == [1, 2]
    assert seed_store.stale_chapters() == [1, 2]
    # Renaming a stale chapter leaves it stale.
    assert seed_store.save_manual_edit(1, (renamed + "又一句。").replace("残玉", "玉", 1)) == []
    assert seed_store.stale_chapters() == [1, 2]
