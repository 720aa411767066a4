"""The drop table (controllers/drops.py): what each kind of drop does on each target, and how a drag's files
are classified (by extension, count and 字数, read in their own encoding)."""

from __future__ import annotations

from pathlib import Path

import pytest

from novel_desktop.controllers.drops import (
    Action,
    Choice,
    Content,
    Dropped,
    Target,
    accepts_drag,
    classify,
    decide,
    dropped_from,
    read_texts,
)

A, C = Action, Choice
TRADITIONAL = "　　山路彎彎，林楓背著藥簍往上走，霧氣在松林間慢慢散開。「師父，」他說，「玉又亮了。」\n\n"
PROSE = "　　山路弯弯，林枫背着药篓往上走，雾气在松林间慢慢散开。“师父，”他说，“玉又亮了。”\n\n"
#: Every refusal names what went wrong; every target refuses the same things.
REFUSED = (Content.MANUSCRIPTS, Content.WEB, Content.IMAGE, Content.FOLDER, Content.TOO_MANY,
           Content.UNREADABLE, Content.OTHER)  # fmt: skip

#: (content, target) → (action, choices) for everything not refused.
MATRIX: dict[tuple[Content, Target], tuple[Action, tuple[Choice, ...]]] = {
    (Content.MANUSCRIPT, Target.WINDOW): (A.IMPORT, ()),
    (Content.MANUSCRIPT, Target.TREE): (A.IMPORT, ()),
    (Content.MANUSCRIPT, Target.EDITOR): (A.ASK, (C.IMPORT, C.INSERT)),
    (Content.MANUSCRIPT, Target.STYLE): (A.IMPORT, ()),
    (Content.SAMPLE, Target.WINDOW): (A.ASK, (C.IMPORT, C.STYLE)),
    (Content.SAMPLE, Target.TREE): (A.ASK, (C.IMPORT, C.STYLE)),
    (Content.SAMPLE, Target.EDITOR): (A.ASK, (C.IMPORT, C.STYLE, C.INSERT)),
    (Content.SAMPLE, Target.STYLE): (A.STYLE, ()),
    (Content.SAMPLES, Target.WINDOW): (A.STYLE, ()),
    (Content.SAMPLES, Target.TREE): (A.STYLE, ()),
    (Content.SAMPLES, Target.EDITOR): (A.ASK, (C.STYLE,)),
    (Content.SAMPLES, Target.STYLE): (A.STYLE, ()),
    (Content.TEXT, Target.WINDOW): (A.IGNORE, ()),
    (Content.TEXT, Target.TREE): (A.IGNORE, ()),
    (Content.TEXT, Target.EDITOR): (A.INSERT_TEXT, ()),
    (Content.TEXT, Target.STYLE): (A.STYLE, ()),
    **{(Content.NOTHING, t): (A.IGNORE, ()) for t in Target},
}


@pytest.mark.parametrize("target", list(Target))
@pytest.mark.parametrize("content", list(Content))
def test_the_table(content: Content, target: Target) -> None:
    decision = decide(content, target)
    if content in REFUSED:
        assert decision.action is Action.REFUSE
        assert decision.message and decision.message.endswith("。")
        assert decision.choices == ()
    else:
        assert (decision.action, decision.choices) == MATRIX[content, target]
        assert decision.message == ""


def test_the_table_never_inserts_a_file_and_only_the_window_imports_without_asking() -> None:
    for target in Target:
        for content in Content:
            decision = decide(content, target)
            if decision.action is Action.INSERT_TEXT:
                assert content is Content.TEXT  # a file's text goes in only when the author chose it
            if target is Target.EDITOR:
                assert decision.action in (Action.ASK, Action.INSERT_TEXT, Action.REFUSE, Action.IGNORE)


def test_which_drags_are_taken() -> None:
    assert all(accepts_drag(True, False, t) for t in Target)  # files and links: explained on drop
    assert accepts_drag(False, True, Target.EDITOR) and accepts_drag(False, True, Target.STYLE)
    assert not accepts_drag(False, True, Target.WINDOW) and not accepts_drag(False, True, Target.TREE)
    assert not any(accepts_drag(False, False, t) for t in Target)


def test_dropped_from_a_drags_urls() -> None:
    d = dropped_from([(True, "/tmp/a.txt"), (False, "https://example.com/x"), (True, "/tmp/b.md")], "ignored")
    assert d == Dropped(("/tmp/a.txt", "/tmp/b.md"), 1, "")  # a file manager's text is only the paths
    assert dropped_from([], "一段文字") == Dropped((), 0, "一段文字")


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    made = {
        "sample": ("样本.txt", PROSE * 40, "utf-8"),
        "sample_md": ("样本二.md", PROSE * 30, "utf-8"),
        "sample_big5": ("樣本.txt", TRADITIONAL * 30, "big5"),
        "book": ("全书.txt", "第一章 上山\n\n" + PROSE * 1200, "utf-8"),
        "book_gb": ("全书2.txt", "第一章 上山\n\n" + PROSE * 900, "gb18030"),
        "empty": ("空.txt", "", "utf-8"),
    }
    out: dict[str, Path] = {}
    for key, (name, text, encoding) in made.items():
        out[key] = tmp_path / name
        out[key].write_bytes(text.encode(encoding))
    out["png"] = tmp_path / "封面.png"
    out["png"].write_bytes(b"\x89PNG\r\n")
    out["pdf"] = tmp_path / "书.pdf"
    out["pdf"].write_bytes(b"%PDF-1.4")
    out["epub"] = tmp_path / "书.epub"
    out["epub"].write_bytes(b"PK")  # classified by extension; read only when imported
    out["broken_docx"] = tmp_path / "坏的.docx"
    out["broken_docx"].write_bytes(b"not a zip file")
    out["folder"] = tmp_path / "文件夹"
    out["folder"].mkdir()
    out["missing"] = tmp_path / "不存在.txt"
    return out


def test_classify(files: dict[str, Path]) -> None:
    def kind(*keys: str, text: str = "", web: int = 0) -> Content:
        return classify(Dropped(tuple(str(files[k]) for k in keys), web, text))

    assert kind("sample") is Content.SAMPLE
    assert kind("sample_big5") is Content.SAMPLE  # read in its own encoding
    assert kind("sample", "sample_md") is Content.SAMPLES
    assert kind("sample", "sample_md", "sample_big5") is Content.SAMPLES
    assert kind("sample", "sample_md", "sample_big5", "sample") is Content.TOO_MANY
    assert kind("book") is Content.MANUSCRIPT
    assert kind("book_gb") is Content.MANUSCRIPT  # counted in 字, not bytes
    assert kind("epub") is Content.MANUSCRIPT
    assert kind("book", "book_gb") is Content.MANUSCRIPTS
    assert kind("sample", "book") is Content.MANUSCRIPTS
    assert kind("epub", "sample") is Content.MANUSCRIPTS
    assert kind("png") is Content.IMAGE
    assert kind("png", "sample") is Content.OTHER
    assert kind("pdf") is Content.OTHER
    assert kind("folder") is Content.FOLDER
    assert kind("missing") is Content.UNREADABLE
    assert kind("broken_docx") is Content.UNREADABLE
    assert kind("empty") is Content.SAMPLE  # readable; the style analysis says it has no prose
    assert kind(web=2) is Content.WEB
    assert kind(text="一段文字") is Content.TEXT
    assert kind(text="  \n") is Content.NOTHING
    assert kind() is Content.NOTHING


def test_classify_reads_docx_samples(tmp_path: Path) -> None:
    import docx

    document = docx.Document()
    for _ in range(30):
        document.add_paragraph(PROSE.strip())
    path = tmp_path / "样本.docx"
    document.save(str(path))
    assert classify(Dropped((str(path),))) is Content.SAMPLE


def test_read_texts(files: dict[str, Path]) -> None:
    text = read_texts([str(files["sample_big5"]), str(files["sample"])])
    assert text.startswith("　　山路") and "師父" in text and "师父" in text


def test_every_refusal_and_answer_is_in_english_too() -> None:
    from novel_desktop import i18n
    from novel_desktop.controllers.drops import CHOICE_LABELS

    i18n.set_language("en")
    try:
        for content in REFUSED:
            message = decide(content, Target.WINDOW).message
            assert message.isascii() and message.endswith("."), message
        assert all(i18n.tr(label).isascii() for label in CHOICE_LABELS.values())
    finally:
        i18n.set_language("zh")
