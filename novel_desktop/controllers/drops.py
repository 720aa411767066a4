"""What a drop does, by what is dropped and where: one table for the whole window.

:func:`classify` looks at what a drag carries (reading files to count their 字: run it in a worker thread for
anything but a handful of small files) and names it a :class:`Content`; :func:`decide` is the table itself, a
pure function of (content, :class:`Target`) to a :class:`Decision`. The window, the chapter editor and the
style page all follow it, so a manuscript never becomes style samples by accident and a file dropped on the
editor is never inserted as its ``file:///`` URL.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from novel_desktop.analysis.manuscript import ManuscriptError, read_manuscript
from novel_desktop.controllers.style_controller import MANUSCRIPT_SUFFIXES, MAX_SAMPLE_CHARS, MAX_SAMPLE_FILES
from novel_desktop.domain.text import count_chars
from novel_desktop.i18n import tr

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".svg", ".tif", ".tiff", ".heic")
# No character takes more than 4 bytes in any supported encoding, so a text file this big holds more than
# MAX_SAMPLE_CHARS characters and need not be read to be classified.
_SURELY_BIG_BYTES = MAX_SAMPLE_CHARS * 4


class Target(StrEnum):
    """Where something was dropped."""

    WINDOW = "window"  # the main window, its start page, anywhere without a drop target of its own
    TREE = "tree"  # the project tree
    EDITOR = "editor"  # a chapter editor
    STYLE = "style"  # the style page and its drop zone


class Content(StrEnum):
    """What a drag carries."""

    MANUSCRIPT = "manuscript"  # one txt/md/docx too long for a style sample, or one .epub
    SAMPLE = "sample"  # one readable txt/md/docx of at most MAX_SAMPLE_CHARS 字
    SAMPLES = "samples"  # 2-3 such files, together within MAX_SAMPLE_CHARS
    MANUSCRIPTS = "manuscripts"  # several files, too long together for samples (import takes one book)
    TEXT = "text"  # dragged text, no files
    WEB = "web"  # links that are not files on this computer
    IMAGE = "image"  # pictures only
    FOLDER = "folder"  # a folder among the files
    TOO_MANY = "too_many"  # more than MAX_SAMPLE_FILES files
    UNREADABLE = "unreadable"  # a file that is gone or cannot be read as text
    OTHER = "other"  # files of a kind the app does not read
    NOTHING = "nothing"  # nothing usable at all


class Action(StrEnum):
    IMPORT = "import"  # open the import preview (the style page: offer the import)
    STYLE = "style"  # measure as style samples into the style profile
    ASK = "ask"  # ask the author which of ``Decision.choices``
    INSERT_TEXT = "insert_text"  # the editor inserts the dragged text, as any text field does
    REFUSE = "refuse"  # explain ``Decision.message``; nothing changes
    IGNORE = "ignore"  # the drag is not accepted at all


class Choice(StrEnum):
    """The answers an :attr:`Action.ASK` offers (取消 is always offered besides)."""

    IMPORT = "import"
    STYLE = "style"
    INSERT = "insert"


#: The button label of each choice (Chinese source strings, shown through tr()).
CHOICE_LABELS: dict[Choice, str] = {
    Choice.IMPORT: "导入为书稿",
    Choice.STYLE: "用作风格样本",
    Choice.INSERT: "插入其文本",
}


@dataclass(frozen=True)
class Dropped:
    """A drag's payload as plain data: local paths, how many other links, the dragged text (if no files)."""

    paths: tuple[str, ...] = ()
    web_links: int = 0
    text: str = ""


@dataclass(frozen=True)
class Decision:
    action: Action
    #: For ASK: the offered answers, in button order.
    choices: tuple[Choice, ...] = ()
    #: For REFUSE: what the author is told (already translated).
    message: str = ""


def _file_chars(path: Path) -> int | None:
    """The 字数 of a file (more than MAX_SAMPLE_CHARS for one surely too big to read), None if unreadable."""
    try:
        if path.suffix.lower() not in (".docx", ".epub") and path.stat().st_size > _SURELY_BIG_BYTES:
            return MAX_SAMPLE_CHARS + 1
        return count_chars(read_manuscript(path).text)
    except (ManuscriptError, OSError):
        return None


def classify(dropped: Dropped) -> Content:
    """What ``dropped`` is. Reads the files (blocking) when that decides sample against manuscript."""
    if not dropped.paths:
        if dropped.web_links:
            return Content.WEB
        return Content.TEXT if dropped.text.strip() else Content.NOTHING
    files = [Path(p) for p in dropped.paths]
    if any(f.is_dir() for f in files):
        return Content.FOLDER
    suffixes = [f.suffix.lower() for f in files]
    if all(s in IMAGE_SUFFIXES for s in suffixes):
        return Content.IMAGE
    if any(s not in MANUSCRIPT_SUFFIXES for s in suffixes):
        return Content.OTHER
    if len(files) > MAX_SAMPLE_FILES:
        return Content.TOO_MANY
    if any(not f.is_file() for f in files):
        return Content.UNREADABLE
    if ".epub" in suffixes:
        return Content.MANUSCRIPT if len(files) == 1 else Content.MANUSCRIPTS
    counts = [_file_chars(f) for f in files]
    if any(c is None for c in counts):
        return Content.UNREADABLE
    total = sum(c or 0 for c in counts)
    if len(files) == 1:
        return Content.SAMPLE if total <= MAX_SAMPLE_CHARS else Content.MANUSCRIPT
    return Content.SAMPLES if total <= MAX_SAMPLE_CHARS else Content.MANUSCRIPTS


def _refusals() -> dict[Content, str]:
    return {
        Content.MANUSCRIPTS: tr("一次只能导入一部书稿：请只拖入一个文件。"),
        Content.WEB: tr("只能拖入这台电脑上的文件，不能拖入网页链接。"),
        Content.IMAGE: tr("图片不能用作书稿或文风样本：请拖入 txt、md、docx 或 epub 文件。"),
        Content.FOLDER: tr("请拖入文件，而不是文件夹。"),
        Content.TOO_MANY: tr("文件太多：一次拖入一部书稿，或 1-3 个文风样本。"),
        Content.UNREADABLE: tr("读不出这些文件的文字：文件可能已被移走、损坏或不是文本。"),
        Content.OTHER: tr("不支持这种文件：请拖入 txt、md、docx 或 epub 文件。"),
    }


#: The table: (target kind, content) → (action, choices). Targets not listed for a content refuse it.
_WINDOW: dict[Content, tuple[Action, tuple[Choice, ...]]] = {
    Content.MANUSCRIPT: (Action.IMPORT, ()),
    # One short file is a sample chapter or a short book: only the author knows.
    Content.SAMPLE: (Action.ASK, (Choice.IMPORT, Choice.STYLE)),
    Content.SAMPLES: (Action.STYLE, ()),
    Content.TEXT: (Action.IGNORE, ()),
    Content.NOTHING: (Action.IGNORE, ()),
}
_EDITOR: dict[Content, tuple[Action, tuple[Choice, ...]]] = {
    Content.MANUSCRIPT: (Action.ASK, (Choice.IMPORT, Choice.INSERT)),
    Content.SAMPLE: (Action.ASK, (Choice.IMPORT, Choice.STYLE, Choice.INSERT)),
    Content.SAMPLES: (Action.ASK, (Choice.STYLE,)),
    Content.TEXT: (Action.INSERT_TEXT, ()),
    Content.NOTHING: (Action.IGNORE, ()),
}
_STYLE: dict[Content, tuple[Action, tuple[Choice, ...]]] = {
    Content.MANUSCRIPT: (Action.IMPORT, ()),
    Content.SAMPLE: (Action.STYLE, ()),
    Content.SAMPLES: (Action.STYLE, ()),
    Content.TEXT: (Action.STYLE, ()),  # dragged text is measured as a sample
    Content.NOTHING: (Action.IGNORE, ()),
}
_TABLE = {Target.WINDOW: _WINDOW, Target.TREE: _WINDOW, Target.EDITOR: _EDITOR, Target.STYLE: _STYLE}


def decide(content: Content, target: Target) -> Decision:
    """What a drop of ``content`` on ``target`` does (pure: the same answer every time)."""
    action, choices = _TABLE[target].get(content, (Action.REFUSE, ()))
    if action is Action.REFUSE:
        return Decision(action, message=_refusals()[content])
    return Decision(action, choices)


def accepts_drag(has_urls: bool, has_text: bool, target: Target) -> bool:
    """Whether ``target`` takes a drag at all (before any file is read): files and links everywhere (so a
    refusal can be explained on drop), text only where text has a use."""
    if has_urls:
        return True
    return has_text and decide(Content.TEXT, target).action is not Action.IGNORE


def dropped_from(urls: Sequence[tuple[bool, str]], text: str) -> Dropped:
    """A :class:`Dropped` from (is_local_file, local path or URL) pairs, as a QMimeData's urls give them, and
    the drag's text (kept only when it carries no links: a file manager's text is the files' paths)."""
    paths = tuple(path for local, path in urls if local and path)
    return Dropped(paths, sum(1 for local, _ in urls if not local), "" if urls else text)


def read_texts(paths: Sequence[str]) -> str:
    """The text of ``paths`` (any supported format and encoding), one file after another (blocking).
    Raises ManuscriptError (its message is for the author)."""
    return "\n\n".join(read_manuscript(p).text.strip("\n") for p in paths)
