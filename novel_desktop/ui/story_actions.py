"""The 故事 menu: on-demand work outside the chapter loop (seed 004 §4.2 工具式, §6 Layer 3 全局维护).

Each action asks for what it needs in a small dialog, then runs as the pipeline controller's one owned task
(so it never overlaps a 续写 and 停止 cancels it): add a character (CharacterWeaver from a description),
retire a character, extend the world (WorldBuilder), add a storyline, import research notes, re-judge the
current chapter, and re-evaluate a range of chapters through the Message Batches API at half price.
Questions the agents raise (``requires_user_decision``) arrive as the usual NOVEL_ASK dialogs.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QInputDialog, QLineEdit, QMainWindow, QMenu, QWidget

from novel_desktop.controllers.pipeline_controller import PipelineController
from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.controllers.suggestions_controller import SuggestionsController
from novel_desktop.i18n import paren, tr
from novel_desktop.ui import alerts

#: A storyline id as the seed writes them (``main_arc``, ``sect_war``).
_SLUG = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")


def parse_chapter_range(text: str, last: int) -> list[int] | None:
    """``"3-8"``, ``"5"`` or ``"1-3,7"`` → the chapter numbers within 1..last; None when unreadable."""
    numbers: list[int] = []
    for part in re.split(r"[,，、\s]+", text.strip()):
        if not part:
            continue
        m = re.fullmatch(r"(\d+)(?:\s*[-~～到至]\s*(\d+))?", part)
        if m is None:
            return None
        a = int(m.group(1))
        b = int(m.group(2) or a)
        if a > b:
            a, b = b, a
        numbers += [n for n in range(a, b + 1) if 1 <= n <= last]
    return sorted(set(numbers)) or None


class StoryActions(QObject):
    """Owns the 故事 menu's actions; asks for their input and hands them to the pipeline controller."""

    def __init__(
        self,
        project: ProjectController,
        pipeline: PipelineController,
        parent: QWidget,
        current_chapter: Callable[[], int | None],
    ) -> None:
        super().__init__(parent)
        self.project = project
        self.pipeline = pipeline
        self.window = parent
        self._current_chapter = current_chapter
        self.add_character_action = self._action(
            tr("添加角色…"), self.add_character, tr("描述一个新角色，由角色设计师写出档案、契约和关系")
        )
        self.retire_character_action = self._action(
            tr("角色退场…"), self.retire_character, tr("把一个角色移到退场名单，档案和契约原样保留")
        )
        self.extend_world_action = self._action(
            tr("扩展世界观…"), self.extend_world, tr("新增设定或规则；与硬规则冲突时会先问你")
        )
        self.add_storyline_action = self._action(tr("添加故事线…"), self.add_storyline)
        self.import_research_action = self._action(
            tr("导入研究资料…"), self.import_research, tr("把 txt/md 资料存进小说，世界观和角色设计会参考")
        )
        self.rejudge_action = self._action(
            tr("重新评审本章"), self.rejudge, tr("让评审重新给当前章节打分，旧的评审保留在日志里")
        )
        self.suggest_action = self._action(
            tr("按评审意见修改建议"),
            self.suggest,
            tr("把评审对当前章节的意见变成逐条的修改，逐条接受或拒绝"),
        )
        self.suggestions = SuggestionsController(pipeline, self)
        self.reevaluate_action = self._action(
            tr("批量重新评审…"), self.reevaluate, tr("用批处理接口半价重新评审多章")
        )
        self.actions = [
            self.add_character_action,
            self.retire_character_action,
            self.extend_world_action,
            self.add_storyline_action,
            self.import_research_action,
            self.rejudge_action,
            self.suggest_action,
            self.reevaluate_action,
        ]

    def _action(self, text: str, slot: Callable[[], object], tip: str = "") -> QAction:
        action = QAction(text, self)
        if tip:
            action.setToolTip(tip)
            action.setStatusTip(tip)
        action.triggered.connect(lambda _checked=False: slot())
        return action

    def fill_menu(self, menu: QMenu) -> None:
        menu.addActions(self.actions[:5])
        menu.addSeparator()
        menu.addActions(self.actions[5:])

    def set_enabled(self, enabled: bool) -> None:
        for action in self.actions:
            action.setEnabled(enabled)

    # ------------------------------------------------------------------ helpers
    def _ready(self) -> bool:
        if not self.project.is_open:
            return False
        if self.pipeline.running:
            alerts.info(self.window, tr("正在运行"), tr("当前任务结束后再做这一步。"))
            return False
        return True

    def _text(self, title: str, label: str, text: str = "") -> str | None:
        value, ok = QInputDialog.getMultiLineText(self.window, title, label, text)
        value = value.strip()
        return value if ok and value else None

    # ------------------------------------------------------------------ actions
    def add_character(self) -> None:
        if not self._ready():
            return
        description = self._text(
            tr("添加角色"), tr("描述新角色：名字、身份、性格、和主角的关系、在故事里的作用")
        )
        if description:
            self.pipeline.run_action("add_character", description=description)

    def active_characters(self) -> dict[str, str]:
        """Active characters: display label → slug."""
        out: dict[str, str] = {}
        for path in self.project.documents("characters/active/"):
            if not path.endswith(".json"):
                continue
            slug = path.rsplit("/", 1)[-1].removesuffix(".json")
            data = self.project.document_json(path)
            name = str(data.get("name") or slug) if isinstance(data, dict) else slug
            out[name + paren(slug)] = slug
        return out

    def retire_character(self) -> None:
        if not self._ready():
            return
        characters = self.active_characters()
        if not characters:
            alerts.info(self.window, tr("角色退场"), tr("这部小说还没有活跃的角色。"))
            return
        label, ok = QInputDialog.getItem(
            self.window, tr("角色退场"), tr("让谁退场？"), list(characters), 0, False
        )
        if not ok:
            return
        reason, ok = QInputDialog.getText(self.window, tr("角色退场"), tr("退场原因（可不填）："))
        if ok:
            self.pipeline.run_action("retire_character", slug=characters[label], reason=reason.strip())

    def extend_world(self) -> None:
        if not self._ready():
            return
        request = self._text(tr("扩展世界观"), tr("要新增或改动的设定（地点、势力、体系、规则……）"))
        if request:
            self.pipeline.run_action("extend_world", request=request)

    def add_storyline(self) -> None:
        if not self._ready():
            return
        name, ok = QInputDialog.getText(self.window, tr("添加故事线"), tr("故事线名称（如 宗门暗战）："))
        name = name.strip()
        if not ok or not name:
            return
        storyline_id, ok = QInputDialog.getText(
            self.window,
            tr("添加故事线"),
            tr("英文标识（小写字母开头，字母、数字、下划线，如 sect_war）："),
            QLineEdit.EchoMode.Normal,
        )
        storyline_id = storyline_id.strip()
        if not ok or not storyline_id:
            return
        if not _SLUG.match(storyline_id):
            alerts.warning(
                self.window,
                tr("添加故事线"),
                tr("标识“{id}”不能用：只能用小写英文字母开头，后面是字母、数字、下划线或连字符。").format(
                    id=storyline_id
                ),
            )
            return
        description = self._text(tr("添加故事线"), tr("这条线讲什么（可不填）：")) or ""
        self.pipeline.run_action(
            "add_storyline", storyline_id=storyline_id, name=name, description=description
        )

    def import_research(self) -> None:
        if not self._ready():
            return
        files, _ = QFileDialog.getOpenFileNames(
            self.window, tr("导入研究资料"), str(Path.home()), tr("文本 (*.txt *.md)")
        )
        if files:
            self.pipeline.run_action("import_research", files=files)

    def rejudge(self) -> None:
        if not self._ready():
            return
        chapter = self._current_chapter()
        committed = {c.number for c in self.project.chapters()}
        if chapter is None or chapter not in committed:
            alerts.info(self.window, tr("重新评审"), tr("先打开一个已写好的章节。"))
            return
        self.pipeline.run_action("rejudge", chapter=chapter)

    def suggest(self) -> None:
        """The judge's issues on the current chapter as suggestions beside its editor."""
        from novel_desktop.ui.suggestions_view import open_suggestions

        chapter = self._current_chapter()
        if not self.project.is_open or chapter is None:
            return
        if chapter not in {c.number for c in self.project.chapters()}:
            alerts.info(self.window, tr("修改建议"), tr("先打开一个已写好的章节。"))
            return
        tab = self.window.open_chapter(chapter)  # type: ignore[attr-defined]
        if tab is not None and isinstance(self.window, QMainWindow):
            open_suggestions(self.window, tab.editor, self.suggestions, chapter)

    def reevaluate(self) -> None:
        if not self._ready():
            return
        chapters = [c.number for c in self.project.chapters()]
        if not chapters:
            alerts.info(self.window, tr("批量重新评审"), tr("还没有写好的章节。"))
            return
        last = max(chapters)
        text, ok = QInputDialog.getText(
            self.window,
            tr("批量重新评审"),
            tr("重新评审哪些章？（如 1-{last}，或 3,5,8；批处理半价，结果可能要等一会儿）").format(last=last),
            QLineEdit.EchoMode.Normal,
            f"1-{last}",
        )
        if not ok:
            return
        picked = parse_chapter_range(text, last)
        picked = [n for n in picked or [] if n in set(chapters)]
        if not picked:
            alerts.warning(
                self.window,
                tr("批量重新评审"),
                tr("“{text}”里没有已写好的章节，请写成 1-{last} 这样的范围。").format(text=text, last=last),
            )
            return
        self.pipeline.run_action("reevaluate", chapters=picked)
