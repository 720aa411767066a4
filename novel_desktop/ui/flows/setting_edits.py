"""Later edits from the window: the proposal forms, prefilled with what the novel holds now, reached from
the 故事 menu, the project tree's 角色 / 故事线 / 世界规则 items (right-click 修改…) and the outline view's
chapter contracts; saved with 「自第 N 章起生效」 through
:class:`~novel_desktop.controllers.setting_edits.SettingEdits` (one transaction and a changelog line, a job).

A read-only novel, or one busy with a run, is refused with a clear message before the form opens; a save
that fails (the novel became unwritable, the payload does not validate) is told and the dialog stays open
with everything typed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from novel_desktop.controllers.jobs import Job
from novel_desktop.controllers.setting_edits import KIND_TITLES, SettingEdits
from novel_desktop.i18n import tr, tr_n
from novel_desktop.ui import alerts
from novel_desktop.ui.character_form import CharacterForm
from novel_desktop.ui.payload_table import PayloadForm, normalized
from novel_desktop.ui.proposal_dialog import error_label, problems_text
from novel_desktop.ui.proposal_forms import VolumePlanForm, form_for
from novel_desktop.ui.world_form import WorldForm

if TYPE_CHECKING:
    from novel_desktop.ui.main_window import MainWindow
    from novel_desktop.ui.window_actions import WindowActions


class SettingEditDialog(QDialog):
    """One kind's form, the chapter the edit takes effect from, a note for the changelog, 保存 / 取消."""

    #: The author pressed 保存 and the form validated: the payload, the chapter, the note.
    save_requested = Signal(dict, int, str)

    def __init__(
        self,
        kind: str,
        payload: dict[str, Any],
        *,
        effective_from: int,
        volume: int | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.kind = kind
        self.volume = volume
        self._original = payload
        what = tr(KIND_TITLES.get(kind, kind))
        title = tr("修改{what}").format(what=what)
        if kind == "volume_plan" and volume:
            title = tr("修改第 {n} 卷的大纲与章节契约").format(n=volume)
        self.setWindowTitle(title)
        self.setMinimumSize(900, 600)

        layout = QVBoxLayout(self)
        intro = QLabel(tr("改、删、加都可以。保存后记入变更日志，从下面的章节起生效，已写好的章节不变。"))
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.form: PayloadForm = form_for(kind, payload, volume=volume)
        layout.addWidget(self.form, 1)

        bottom = QFormLayout()
        self.from_spin = QSpinBox()
        self.from_spin.setRange(1, 100000)
        self.from_spin.setValue(max(1, effective_from))
        self.from_spin.setPrefix(tr("自第 "))
        self.from_spin.setSuffix(tr(" 章起生效"))
        self.from_spin.setMaximumWidth(240)
        self.from_spin.setToolTip(tr("默认是下一章（还没写的第一章）"))
        bottom.addRow(tr("生效"), self.from_spin)
        self.note_edit = QLineEdit()
        self.note_edit.setPlaceholderText(tr("为什么改（记入变更日志，可不填）"))
        bottom.addRow(tr("说明"), self.note_edit)
        layout.addLayout(bottom)

        self.error_label = error_label()
        layout.addWidget(self.error_label)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        self.save_button = QPushButton(tr("保存"))
        self.cancel_button = QPushButton(tr("取消"))
        for button in (self.save_button, self.cancel_button):
            button.setAutoDefault(False)
            buttons.addWidget(button)
        self.save_button.setDefault(True)
        self.save_button.clicked.connect(self._on_save_clicked)
        self.cancel_button.clicked.connect(self.reject)
        layout.addLayout(buttons)
        self.form.changed.connect(self.error_label.hide)
        self.resize(1100, 760)

    def _on_save_clicked(self) -> None:
        payload, problems = self.form.collect()
        if payload is None:
            self.show_problem(problems_text(problems, tr("还不能保存，请先改正：")))
            return
        if normalized(self.kind, payload) == normalized(self.kind, self._original):
            self.show_problem(tr("没有改动：表单和小说里现在的内容一样。"))
            return
        self.set_saving(True)
        self.save_requested.emit(payload, self.from_spin.value(), self.note_edit.text().strip())

    def show_problem(self, text: str) -> None:
        self.error_label.setText(text)
        self.error_label.show()

    def set_saving(self, saving: bool) -> None:
        self.save_button.setEnabled(not saving)
        self.save_button.setText(tr("正在保存…") if saving else tr("保存"))

    def accept(self) -> None:
        # Enter in a field means 保存, which checks first; the dialog closes when the store has it.
        self._on_save_clicked()

    def saved(self) -> None:
        super().accept()


class SettingEditFlows(QObject):
    """The window's later edits: menu actions, the tree's 修改…, the outline view's 按表单修改."""

    def __init__(self, window: WindowActions) -> None:
        super().__init__(window)
        # Made while the window builds its menus (window_actions), when its tree, tabs and jobs exist.
        self.window = cast("MainWindow", window)
        window = self.window
        self.edits = SettingEdits(window.project, window.jobs, self)
        self.dialog: SettingEditDialog | None = None
        self._views: list[QWidget] = []
        self.actions: dict[str, QAction] = {}
        menu = window.story_menu
        menu.addSeparator()
        for kind, text in (
            ("world", tr("修改世界规则…")),
            ("characters", tr("修改角色与契约…")),
            ("storylines", tr("修改故事线…")),
            ("volume_plan", tr("修改卷大纲与章节契约…")),
        ):
            action = QAction(text, self)
            action.setStatusTip(tr("用表单修改，记入变更日志，自指定章节起生效"))
            action.triggered.connect(lambda _checked=False, k=kind: self.edit(k))
            menu.addAction(action)
            self.actions[kind] = action
        # Enabled with the 故事 menu's own actions: a novel open, writable, no run going.
        window.story.actions.extend(self.actions.values())
        window.tree.edit_requested.connect(self._on_tree_edit_requested)
        window.tabs.currentChanged.connect(self._on_tabs_current_changed)

    # ------------------------------------------------------------------ entry points
    def _on_tree_edit_requested(self, kind: str, key: str) -> None:
        self.edit(kind, focus=key)

    def _on_tabs_current_changed(self, _index: int) -> None:
        # The outline view is made when first opened; its 按表单修改 request is connected then.
        view = self.window.tabs.currentWidget()
        if view is not None and hasattr(view, "plan_edit_requested") and view not in self._views:
            self._views.append(view)
            view.plan_edit_requested.connect(self._on_view_plan_edit_requested)
            view.destroyed.connect(lambda _obj=None, v=view: self._forget(v))

    def _forget(self, view: QWidget) -> None:
        if view in self._views:
            self._views.remove(view)

    def _on_view_plan_edit_requested(self, volume: int, chapter: int) -> None:
        self.edit("volume_plan", volume=volume, focus=str(chapter) if chapter else "")

    def edit(self, kind: str, *, volume: int | None = None, focus: str = "") -> SettingEditDialog | None:
        """Open the form of ``kind`` prefilled from the novel (``focus``: a character slug, a chapter …)."""
        w = self.window
        title = tr("修改{what}").format(what=tr(KIND_TITLES.get(kind, kind)))
        if not w.project.is_open:
            return None
        refusal = self.edits.refusal()
        if refusal is not None:
            alerts.warning(w, title, refusal)
            return None
        if w.pipeline.running:
            alerts.info(w, title, tr("正在运行：当前任务结束后再修改设定。"))
            return None
        if self.dialog is not None and self.dialog.isVisible():
            self.dialog.raise_()
            return self.dialog
        if kind == "volume_plan" and volume is None:
            volume = int(w.project.checkpoint().get("current_volume") or 1)
        try:
            payload = self.edits.current_payload(kind, volume=volume)
        except Exception as exc:  # a store error: told, nothing opened
            alerts.error(w, title, str(exc))
            return None
        dialog = SettingEditDialog(
            kind, payload, effective_from=self.edits.next_chapter(), volume=volume, parent=w
        )
        self._focus(dialog.form, focus)
        dialog.save_requested.connect(lambda p, n, note, d=dialog: self._save(d, p, n, note))
        dialog.finished.connect(lambda _code, d=dialog: self._on_dialog_finished(d))
        self.dialog = dialog
        dialog.open()
        return dialog

    @staticmethod
    def _focus(form: PayloadForm, key: str) -> None:
        if not key:
            return
        if isinstance(form, CharacterForm):
            form.select_character(key)
        elif isinstance(form, VolumePlanForm) and key.isdigit():
            form.select_chapter(int(key))
        elif isinstance(form, WorldForm):
            row = form.rules.find_row("id", key)
            if row >= 0:
                form.rules.table.selectRow(row)
        elif hasattr(form, "storylines"):
            row = form.storylines.find_row("id", key)
            if row >= 0:
                form.storylines.table.selectRow(row)

    def _on_dialog_finished(self, dialog: SettingEditDialog) -> None:
        if self.dialog is dialog:
            self.dialog = None
        dialog.deleteLater()

    # ------------------------------------------------------------------ saving
    def _save(
        self, dialog: SettingEditDialog, payload: dict[str, Any], effective_from: int, note: str
    ) -> Job:
        job = self.edits.save(
            dialog.kind, payload, effective_from=effective_from, note=note, volume=dialog.volume
        )
        title = dialog.windowTitle()

        def succeeded(paths: object) -> None:
            dialog.set_saving(False)
            dialog.saved()
            count = len(paths) if isinstance(paths, list) else 0
            self.window.statusBar().showMessage(
                tr_n("已保存{what}，自第 {n} 章起生效（写入 {count} 个文档）", count).format(
                    what=tr(KIND_TITLES.get(dialog.kind, dialog.kind)), n=effective_from, count=count
                ),
                8000,
            )
            self.window.tree.reload()

        def failed(message: str) -> None:
            dialog.set_saving(False)
            dialog.show_problem(tr("没有保存：{reason}").format(reason=message))
            alerts.error(self.window, title, tr("没有保存，小说未改动：\n{reason}").format(reason=message))

        job.succeeded.connect(succeeded)
        job.failed.connect(failed)
        return job
