"""The main window's actions, menus and toolbar, and the memory of its layout (geometry and docks in
``window.ini``), as a base class of the window (the slots are the window's and its flows')."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QSettings, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget, QMainWindow, QMenu, QToolBar

from novel_desktop.i18n import tr
from novel_desktop.paths import user_config_dir
from novel_desktop.ui.flows.author_lists import install as install_author_lists
from novel_desktop.ui.flows.context import ContextFlows
from novel_desktop.ui.flows.rollback import RollbackFlows
from novel_desktop.ui.flows.setting_edits import SettingEditFlows
from novel_desktop.ui.shortcuts import LocalShortcutsFirst, ShortcutsDialog, show_keys_in_tooltip

if TYPE_CHECKING:
    from novel_desktop.controllers.pipeline_controller import PipelineController
    from novel_desktop.ui.flows.files import FileFlows
    from novel_desktop.ui.flows.novels import NovelFlows
    from novel_desktop.ui.flows.runs import RunFlows
    from novel_desktop.ui.story_actions import StoryActions


Std = QKeySequence.StandardKey
Key = str | Std
#: Shortcuts: Qt's standard keys where it has them (Save, Find, …: the platform's own), plain ones otherwise;
#: none clashes with another action or with the editor's own keys (tests/ui/test_shortcuts.py). 停止 is Esc:
#: Ctrl+. toggles full-width punctuation in the common Chinese input methods.
STOP_KEYS: tuple[Key, ...] = ("Esc",)

#: Bump when the docks change, so an old saved layout is not applied to a different set of docks.
LAYOUT_VERSION = 1


def layout_settings() -> QSettings:
    """Window geometry and dock layout, next to app.json (never the registry: tests redirect the folder)."""
    return QSettings(str(user_config_dir() / "window.ini"), QSettings.Format.IniFormat)


class WindowActions(QMainWindow):
    """Builds the window's actions (``*_action`` attributes), menus and toolbar; keeps its layout."""

    # Provided by the window before the actions are built.
    novels: NovelFlows
    files: FileFlows
    runs: RunFlows
    pipeline: PipelineController
    story: StoryActions
    tree_dock: QDockWidget
    quality_dock: QDockWidget
    progress_dock: QDockWidget

    def indent_current(self) -> None: ...
    def show_history(self) -> object: ...
    def show_find_replace(self) -> object: ...
    def show_settings(self) -> object: ...
    def show_start_page(self) -> None: ...
    def save_all(self) -> None: ...
    def open_view(self, name: str, volume: int = 0) -> object: ...

    def _action(
        self,
        text: str,
        slot: Callable[[], object],
        shortcut: Key | Sequence[Key] | None = None,
        tip: str = "",
    ) -> QAction:
        action = QAction(text, self)
        if shortcut:
            keys = [shortcut] if isinstance(shortcut, str | Std) else shortcut
            action.setShortcuts([QKeySequence(k) for k in keys])
        if tip:
            action.setToolTip(tip)
            action.setStatusTip(tip)
        action.triggered.connect(lambda _checked=False: slot())
        return action

    def _create_actions(self) -> None:
        """Every action of the menus and the toolbar, as attributes of the window."""
        a = self._action

        self.start_action = a(tr("开始页"), self.show_start_page)
        self.new_action = a(tr("新建小说…"), self.novels.new_novel, Std.New)
        self.open_action = a(tr("打开小说…"), self.novels.open_novel_dialog, Std.Open)
        self.import_action = a(tr("导入书稿…"), self.files.import_manuscript_dialog, "Ctrl+Shift+O")
        self.export_action = a(
            tr("导出…"), self.files.export_dialog, "Ctrl+E", tr("导出为 txt、md、epub 或 docx")
        )
        self.close_action = a(tr("关闭小说"), self.novels.close_novel)
        self.quit_action = a(tr("退出"), self.close, "Ctrl+Q")  # Qt has no standard Quit key on Windows
        self.save_action = a(tr("保存"), self.save_all, Std.Save)
        self.find_action = a(
            tr("查找替换…"), self.show_find_replace, (Std.Find, "Ctrl+Shift+F"), tr("在全书中查找和替换")
        )
        self.indent_action = a(tr("段首缩进"), self.indent_current, tip=tr("每段开头加两个全角空格“　　”"))
        self.history_action = a(
            tr("历史版本…"),
            self.show_history,
            "Ctrl+Shift+H",
            tr("本章的所有版本，与草稿、润色稿对比，可恢复"),
        )
        self.continue_action = a(
            tr("续写"), self.runs.continue_one, ("Ctrl+Return", "Ctrl+Enter"), tr("按本卷大纲续写下一章")
        )
        self.continue_n_action = a(tr("续写 N 章…"), self.runs.continue_many, "Ctrl+Shift+Return")
        self.stop_action = a(
            tr("停止"), self.pipeline.cancel, STOP_KEYS, tr("立即停止；未提交的章节下次续写时继续")
        )
        self.rebuild_action = a(
            tr("重建…"),
            self.runs.rebuild_stale,
            "Ctrl+Shift+R",
            tr("重新摘要手改过的章节、重放故事状态，并检查后续章节"),
        )
        self.quick_start_action = a(
            tr("快速起步…"),
            lambda: self.runs.run_lifecycle("quick_start"),
            tip=tr("回答题材、主角、冲突和平台，生成设定、角色和文风，试写 3 章"),
        )
        self.adopt_action = a(
            tr("接续已有书稿…"),
            lambda: self.runs.adopt.open(),
            tip=tr("逐章分析导入的书稿，归纳人物、设定、故事线、伏笔和文风，确认后就能续写"),
        )
        self.plan_action = a(
            tr("规划卷…"),
            lambda: self.runs.run_lifecycle("plan"),
            tip=tr("规划当前卷或下一卷：大纲、章节契约、故事线调度、伏笔"),
        )
        self.review_action = a(
            tr("卷末回顾"),
            lambda: self.runs.run_lifecycle("review"),
            tip=tr("全卷一致性报告、伏笔完成度、下卷铺垫、状态清理，然后进入下一卷规划"),
        )
        self.check_action = a(
            tr("定期检查"),
            lambda: self.runs.run_lifecycle("check"),
            tip=tr("现在运行到期的质量简报、文风漂移和一致性检查"),
        )
        self.settings_action = a(tr("设置"), self.show_settings, "Ctrl+,")
        self.outline_action = a(tr("大纲"), lambda: self.open_view("outline"))
        self.storylines_action = a(tr("故事线"), lambda: self.open_view("storylines"))
        self.foreshadowing_action = a(tr("伏笔"), lambda: self.open_view("foreshadowing"))
        self.analytics_action = a(
            tr("统计"),
            lambda: self.open_view("analytics"),
            tip=tr("通过率、常见评审问题、每章花费、每日字数"),
        )
        self.style_action = a(
            tr("文风"),
            lambda: self.files.show_style(),
            tip=tr("文风档案：拖入 1-3 章样本测量文风，或直接编辑"),
        )
        self.stop_action.setEnabled(False)
        # Actions that need an open novel (enabled in _update_for_project).
        self._novel_actions = [
            self.export_action,
            self.close_action,
            self.save_action,
            self.find_action,
            self.continue_action,
            self.continue_n_action,
            self.rebuild_action,
            self.quick_start_action,
            self.adopt_action,
            self.plan_action,
            self.review_action,
            self.check_action,
            self.outline_action,
            self.storylines_action,
            self.foreshadowing_action,
            self.analytics_action,
            self.style_action,
        ]
        self._editor_actions = [self.indent_action, self.history_action]

    def _create_menus(self) -> None:
        """The menu bar and the toolbar."""
        bar = self.menuBar()
        file_menu = bar.addMenu(tr("文件"))
        file_menu.addAction(self.start_action)
        file_menu.addSeparator()
        file_menu.addActions([self.new_action, self.open_action, self.import_action])
        self.recent_menu = QMenu(tr("最近打开"), self)
        file_menu.addMenu(self.recent_menu)
        file_menu.addSeparator()
        file_menu.addActions([self.save_action, self.export_action, self.close_action])
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)

        edit_menu = bar.addMenu(tr("编辑"))
        edit_menu.addActions([self.find_action, self.indent_action, self.history_action])

        write_menu = bar.addMenu(tr("写作"))
        write_menu.addActions([self.continue_action, self.continue_n_action, self.stop_action])
        write_menu.addSeparator()
        write_menu.addActions(
            [
                self.quick_start_action,
                self.adopt_action,
                self.plan_action,
                self.review_action,
                self.check_action,
            ]
        )
        write_menu.addSeparator()
        write_menu.addAction(self.rebuild_action)

        self.story_menu = bar.addMenu(tr("故事"))
        self.story.fill_menu(self.story_menu)
        self.setting_edits = SettingEditFlows(self)  # 修改世界规则/角色/故事线/卷大纲 (the forms)
        self.rollback_flows = RollbackFlows(self)  # type: ignore[arg-type]  # 回滚到此章, 已移除的章节
        self.context_flows = ContextFlows(self)  # type: ignore[arg-type]  # 上下文检查

        view_menu = bar.addMenu(tr("视图"))
        view_menu.addActions(
            [
                self.outline_action,
                self.storylines_action,
                self.foreshadowing_action,
                self.analytics_action,
                self.style_action,
            ]
        )
        view_menu.addSeparator()
        for dock in (self.tree_dock, self.quality_dock, self.progress_dock):
            view_menu.addAction(dock.toggleViewAction())

        tools_menu = bar.addMenu(tr("工具"))
        tools_menu.addAction(self.settings_action)
        self.author_lists = install_author_lists(self, tools_menu)  # type: ignore[arg-type]

        help_menu = bar.addMenu(tr("帮助"))
        self.shortcuts_action = self._action(
            tr("快捷键…"),
            lambda: ShortcutsDialog.show_for(self, self.menuBar()),
            Std.HelpContents,
            tr("所有快捷键，按菜单列出"),
        )
        help_menu.addAction(self.shortcuts_action)
        for action in self.findChildren(QAction):
            show_keys_in_tooltip(action)  # "续写（Ctrl+Return）" on the toolbar's buttons
        self.local_shortcuts_first = LocalShortcutsFirst(self)  # the outline's own Ctrl+S, in the outline

        toolbar = QToolBar(tr("工具栏"))
        toolbar.setObjectName("MainToolBar")
        toolbar.setMovable(False)
        toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        toolbar.addActions([self.continue_action, self.continue_n_action, self.stop_action])
        toolbar.addSeparator()
        toolbar.addActions([self.history_action, self.find_action, self.indent_action])
        toolbar.addSeparator()
        toolbar.addActions(
            [self.outline_action, self.storylines_action, self.foreshadowing_action, self.style_action]
        )
        toolbar.addSeparator()
        toolbar.addAction(self.settings_action)
        self.addToolBar(toolbar)
        self.toolbar = toolbar

    # ------------------------------------------------------------------ layout memory
    def apply_default_layout(self) -> None:
        """Dock sizes in proportion to the window, so a laptop screen keeps most of its width for the text."""
        w, h = self.width(), self.height()
        self.resizeDocks(
            [self.tree_dock, self.quality_dock],
            [max(220, int(w * 0.16)), max(280, int(w * 0.22))],
            Qt.Orientation.Horizontal,
        )
        self.resizeDocks([self.progress_dock], [max(140, int(h * 0.15))], Qt.Orientation.Vertical)

    def save_layout(self) -> None:
        s = layout_settings()
        s.setValue("geometry", self.saveGeometry())
        s.setValue("state", self.saveState(LAYOUT_VERSION))
        s.sync()

    def restore_layout(self) -> bool:
        s = layout_settings()
        geometry, state = s.value("geometry"), s.value("state")
        if isinstance(geometry, QByteArray):
            self.restoreGeometry(geometry)
        if isinstance(state, QByteArray):
            return bool(self.restoreState(state, LAYOUT_VERSION))
        return False
