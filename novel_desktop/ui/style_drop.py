"""The style page: drop 1-3 sample chapters, see the measured style profile, edit it, save it.

The measuring itself lives in :mod:`novel_desktop.controllers.style_controller`; with a :class:`JobRunner`
(the window's) it runs as a job in a worker thread, without one (a page on its own) inline. The dialog opens
with ``open()``: it is never run by a nested event loop.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from novel_desktop.controllers.drops import Action, Dropped, Target, classify, decide
from novel_desktop.controllers.jobs import JobRunner
from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.controllers.style_controller import (
    STYLE_PROFILE_PATH,
    SampleAnalysis,
    analyze_samples,
    analyze_text,
)
from novel_desktop.domain.style import StyleProfile
from novel_desktop.i18n import join_list, labelled, tr, tr_n
from novel_desktop.ui.drops import accept_drag, dropped_of

log = logging.getLogger(__name__)

#: The measured ratios kept under ``metrics`` (read-only here; drift checks compare against them).
METRIC_LABELS: tuple[tuple[str, str, str], ...] = (
    ("avg_paragraph_length", "平均段长", "{:.0f} 字"),
    ("long_paragraph_share", "超长段落占比", "{:.0%}"),
    ("short_sentence_share", "短句占比", "{:.0%}"),
    ("simile_per_1k", "比喻（每千字）", "{:.1f}"),
    ("parallelism_per_1k", "排比（每千字）", "{:.1f}"),
    ("rhetorical_question_per_1k", "反问（每千字）", "{:.1f}"),
    ("exclamation_per_1k", "感叹（每千字）", "{:.1f}"),
    ("repetition_window_share", "句式重复", "{:.0%}"),
)

SOURCE_TYPES = (
    ("original", "我的样本（原创）"),
    ("reference", "仿写参考作者"),
    ("template", "风格模板"),
    ("manual", "手改"),
)


def hand_edited(shown: StyleProfile | None, saved: StyleProfile) -> StyleProfile:
    """``saved`` with 手改 as its source when the author changed the profile ``shown`` by hand and left its
    source as it was (a template's profile edited is no longer the template's)."""
    if shown is None or saved.source_type != shown.source_type or saved.source_type == "manual":
        return saved
    before, after = shown.to_json_dict(), saved.to_json_dict()
    if {k: v for k, v in before.items() if k != "source_type"} == {
        k: v for k, v in after.items() if k != "source_type"
    }:
        return saved
    return saved.model_copy(update={"source_type": "manual"})


def _lines(edit: QPlainTextEdit) -> list[str]:
    return [line.strip() for line in edit.toPlainText().splitlines() if line.strip()]


class StyleDropArea(QFrame):
    """A framed target for dragged sample files or text, with a button for those who prefer a file dialog."""

    #: What was dropped or chosen (a controllers.drops.Dropped).
    dropped = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAcceptDrops(True)
        self.setObjectName("styleDropArea")
        self._set_hover(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 14, 16, 14)
        title = QLabel(tr("拖入文本作为风格样本"))
        font = title.font()
        font.setPointSizeF(font.pointSizeF() * 1.15)
        font.setBold(True)
        title.setFont(font)
        title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        hint = QLabel(
            tr("1-3 章样本：.txt、.md、.docx 文件或一段文字，共 3 万字以内。分析在本机完成，不调用模型。")
        )
        hint.setWordWrap(True)
        hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        hint.setStyleSheet("color: palette(dark);")
        self.browse_button = QPushButton(tr("选择样本文件…"))
        self.browse_button.clicked.connect(self._on_browse_clicked)
        layout.addWidget(title)
        layout.addWidget(hint)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.browse_button)
        row.addStretch(1)
        layout.addLayout(row)

    def _set_hover(self, on: bool) -> None:
        color = "#1a73e8" if on else "palette(mid)"
        background = "#eef4fe" if on else "transparent"
        self.setStyleSheet(
            f"#styleDropArea {{ border: 2px dashed {color}; border-radius: 8px; background: {background}; }}"
        )

    def _on_browse_clicked(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(
            self, tr("选择文风样本"), "", tr("文本与文档 (*.txt *.md *.markdown *.docx)")
        )
        if paths:
            self.dropped.emit(Dropped(tuple(paths)))

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        self._set_hover(accept_drag(event, Target.STYLE))

    def dragLeaveEvent(self, event: Any) -> None:
        self._set_hover(False)
        super().dragLeaveEvent(event)

    def dropEvent(self, event: QDropEvent) -> None:
        self._set_hover(False)
        if accept_drag(event, Target.STYLE):
            self.dropped.emit(dropped_of(event.mimeData()))


class StylePage(QWidget):
    """The style profile as an editable form, filled from the novel or from dropped samples."""

    profile_analyzed = Signal(object)  # StyleProfile
    analysis_failed = Signal(str)
    profile_saved = Signal()
    #: A whole manuscript was dropped: the main window offers to import it.
    manuscript_dropped = Signal(str)

    def __init__(
        self, project: ProjectController, parent: QWidget | None = None, *, jobs: JobRunner | None = None
    ) -> None:
        super().__init__(parent)
        self.project = project
        #: Runs the analysis in a worker thread; None: inline (a page without a window).
        self.jobs = jobs
        self.setAcceptDrops(True)
        self._extra: dict[str, Any] = {}
        #: The profile the form was filled from: a save that changed it by hand says 手改 as its source.
        self._shown: StyleProfile | None = None
        self._analyzing = False

        outer = QVBoxLayout(self)
        outer.setContentsMargins(16, 12, 16, 12)
        outer.setSpacing(10)
        self.drop_area = StyleDropArea()
        self.drop_area.dropped.connect(self.handle_drop)
        outer.addWidget(self.drop_area)
        self.status_label = QLabel()
        self.status_label.setWordWrap(True)
        self.status_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        outer.addWidget(self.status_label)

        columns = QHBoxLayout()
        columns.setSpacing(12)
        outer.addLayout(columns, 1)

        # --- measures
        measures = QGroupBox(tr("文风指标"))
        form = QFormLayout(measures)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.sentence_box = QDoubleSpinBox()
        self.sentence_box.setRange(0, 200)
        self.sentence_box.setDecimals(1)
        self.sentence_box.setSuffix(tr(" 字"))
        self.dialogue_box = QDoubleSpinBox()
        self.dialogue_box.setRange(0, 100)
        self.dialogue_box.setDecimals(0)
        self.dialogue_box.setSuffix(" %")
        self.source_box = QComboBox()
        for value, label in SOURCE_TYPES:
            self.source_box.addItem(tr(label), value)
        self.author_edit = QLineEdit()
        self.author_edit.setPlaceholderText(tr("仿写时填写参考作者"))
        self.rhetoric_edit = QPlainTextEdit()
        self.rhetoric_edit.setPlaceholderText(tr("每行一条，如：短句推进动作"))
        self.rhetoric_edit.setMaximumHeight(self.fontMetrics().lineSpacing() * 7 + 12)
        for box in (self.sentence_box, self.dialogue_box, self.source_box):
            box.setMaximumWidth(self.fontMetrics().horizontalAdvance("我的样本（原创）") + 60)
        form.addRow(tr("平均句长"), self.sentence_box)
        form.addRow(tr("对话比例"), self.dialogue_box)
        form.addRow(tr("来源"), self.source_box)
        form.addRow(tr("参考作者"), self.author_edit)
        form.addRow(tr("修辞偏好"), self.rhetoric_edit)
        left = QVBoxLayout()
        left.setSpacing(12)
        left.addWidget(measures)
        measured = QGroupBox(tr("样本测量值（只读）"))
        measured_form = QFormLayout(measured)
        self.metric_labels: dict[str, QLabel] = {}
        for key, label, _fmt in METRIC_LABELS:
            shown = QLabel("—")
            shown.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            self.metric_labels[key] = shown
            measured_form.addRow(tr(label), shown)
        left.addWidget(measured)
        left.addStretch(1)
        columns.addLayout(left, 1)

        # --- rules for the writer and refiner
        rules = QGroupBox(tr("写作规则"))
        rules_form = QFormLayout(rules)
        rules_form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.directives_edit = QPlainTextEdit()
        self.directives_edit.setPlaceholderText(tr("每行一条写作指令"))
        self.forbidden_edit = QPlainTextEdit()
        self.forbidden_edit.setPlaceholderText(tr("每行一个禁用词"))
        self.speech_edit = QPlainTextEdit()
        self.speech_edit.setPlaceholderText(tr("每行一个角色：角色名：说话方式"))
        rules_form.addRow(tr("写作指令"), self.directives_edit)
        rules_form.addRow(tr("禁用词"), self.forbidden_edit)
        rules_form.addRow(tr("角色说话方式"), self.speech_edit)
        columns.addWidget(rules, 1)

        buttons = QHBoxLayout()
        self.button_row = buttons
        buttons.addStretch(1)
        self.revert_button = QPushButton(tr("还原"))
        self.revert_button.setToolTip(tr("丢弃未保存的修改，重新读取小说里保存的文风档案"))
        self.save_button = QPushButton(tr("保存"))
        self.save_button.setDefault(True)
        self.revert_button.clicked.connect(self.load_from_project)
        self.save_button.clicked.connect(self.save)
        buttons.addWidget(self.revert_button)
        buttons.addWidget(self.save_button)
        outer.addLayout(buttons)

        self.load_from_project()

    # ------------------------------------------------------------------ the form
    def set_profile(self, profile: StyleProfile) -> None:
        """Show ``profile`` in the form (unknown keys such as the measured ``metrics`` are kept to save)."""
        data = profile.to_json_dict()
        known = set(StyleProfile.model_fields)
        self._extra = {k: v for k, v in data.items() if k not in known}
        self.sentence_box.setValue(float(profile.avg_sentence_length))
        self.dialogue_box.setValue(round(float(profile.dialogue_ratio) * 100))
        index = self.source_box.findData(profile.source_type)
        self.source_box.setCurrentIndex(max(0, index))
        self.author_edit.setText(profile.reference_author or "")
        self.rhetoric_edit.setPlainText("\n".join(profile.rhetoric_preferences))
        self.directives_edit.setPlainText("\n".join(profile.writing_directives))
        self.forbidden_edit.setPlainText("\n".join(profile.forbidden_words))
        self.speech_edit.setPlainText(
            "\n".join(labelled(who, how) for who, how in profile.character_speech_patterns.items())
        )
        metrics = self._extra.get("metrics") if isinstance(self._extra.get("metrics"), dict) else {}
        for key, _label, fmt in METRIC_LABELS:
            value = metrics.get(key) if metrics else None
            shown = fmt.format(float(value)) if isinstance(value, int | float) else "—"
            self.metric_labels[key].setText(shown)
        self._shown = self.profile_or_none()  # as the form holds it (rounded): what a hand edit changes

    def profile(self) -> StyleProfile:
        """The form as a StyleProfile (raises pydantic's ValidationError on an impossible value)."""
        speech: dict[str, str] = {}
        for line in _lines(self.speech_edit):
            who, sep, how = line.replace(":", "：").partition("：")
            if sep and who.strip() and how.strip():
                speech[who.strip()] = how.strip()
        data: dict[str, Any] = {
            **self._extra,
            "avg_sentence_length": round(self.sentence_box.value(), 1),
            "dialogue_ratio": round(self.dialogue_box.value() / 100, 2),
            "rhetoric_preferences": _lines(self.rhetoric_edit),
            "forbidden_words": _lines(self.forbidden_edit),
            "character_speech_patterns": speech,
            "source_type": self.source_box.currentData(),
            "writing_directives": _lines(self.directives_edit),
            "reference_author": self.author_edit.text().strip() or None,
        }
        return StyleProfile.model_validate(data)

    def profile_or_none(self) -> StyleProfile | None:
        try:
            return self.profile()
        except ValidationError:
            return None

    def load_from_project(self) -> None:
        raw = self.project.document_json(STYLE_PROFILE_PATH) if self.project.is_open else None
        if raw is None:
            self._set_status(tr("这部小说还没有文风档案：拖入样本章节即可生成。"))
            return
        try:
            self.set_profile(StyleProfile.model_validate(raw))
        except ValidationError as exc:
            self._set_status(
                tr("已保存的文风档案无法读取：{error}").format(error=exc.errors()[0]["msg"]), "error"
            )
            return
        self._set_status(tr("显示的是已保存的文风档案。"))

    def save(self) -> bool:
        """Write style-profile.json through the project; False (with the reason shown) when it cannot."""
        try:
            profile = hand_edited(self._shown, self.profile())
            self.source_box.setCurrentIndex(max(0, self.source_box.findData(profile.source_type)))
            self._shown = profile
            text = json.dumps(profile.to_json_dict(), ensure_ascii=False, indent=2) + "\n"
            self.project.save_document(STYLE_PROFILE_PATH, text)
        except ValidationError as exc:
            self._set_status(tr("文风档案有误：{error}").format(error=exc.errors()[0]["msg"]), "error")
            return False
        except OSError as exc:
            self._set_status(tr("保存失败：{error}").format(error=exc), "error")
            return False
        self._set_status(tr("已保存文风档案，之后写作和润色都会按它执行。"), "ok")
        self.profile_saved.emit()
        return True

    def _set_status(self, text: str, kind: str = "info") -> None:
        colors = {"info": "palette(dark)", "ok": "#1e7b34", "error": "#b00020", "busy": "#1a73e8"}
        self.status_label.setStyleSheet(f"color: {colors[kind]};")
        self.status_label.setText(text)

    # ------------------------------------------------------------------ drops and analysis
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        self.drop_area.dragEnterEvent(event)

    def dropEvent(self, event: QDropEvent) -> None:
        self.drop_area.dropEvent(event)

    def handle_files(self, paths: Sequence[str]) -> None:
        """Chosen or dropped files (see :meth:`handle_drop`)."""
        self.handle_drop(Dropped(tuple(str(p) for p in paths)))

    def handle_drop(self, dropped: Dropped) -> None:
        """What the drop table says for the style page: samples (files or dragged text) are measured, a whole
        book is passed on for import, anything else is explained and changes nothing."""
        decision = decide(classify(dropped), Target.STYLE)
        if decision.action is Action.IMPORT:
            self._set_status(tr("这是一部完整书稿，不是样本章节：可以把它导入为小说。"))
            self.manuscript_dropped.emit(str(dropped.paths[0]))
        elif decision.action is Action.STYLE and dropped.paths:
            self.analyze(dropped.paths)
        elif decision.action is Action.STYLE:
            self._measure(tr("拖入的文字"), lambda: analyze_text(dropped.text, tr("拖入的文字")))
        elif decision.action is Action.REFUSE:
            hint = tr("文风样本：请拖入 1-3 个 .txt、.md 或 .docx 文件（合计 3 万字以内），或一段文字。")
            self._set_status(decision.message + "\n" + hint, "error")

    def analyze(self, paths: Sequence[str]) -> None:
        """Measure the samples and show the profile (as a job of the runner when there is one)."""
        files = list(paths)
        self._measure(join_list(Path(p).name for p in files), lambda: analyze_samples(files))

    def _measure(self, names: str, work: Callable[[], SampleAnalysis]) -> None:
        if self._analyzing:
            return
        self._set_status(tr("正在分析 {names} …").format(names=names), "busy")
        if self.jobs is None:
            try:
                result = work()
            except Exception as exc:
                log.warning("style analysis failed", exc_info=True)
                self._show_failure(str(exc))
                return
            self._show_result(result)
            return
        self._analyzing = True
        job = self.jobs.run_in_thread("style_analysis", work, title=tr("文风分析"))
        job.succeeded.connect(self._show_result)
        job.failed.connect(self._show_failure)
        job.finished.connect(self._on_analysis_finished)

    def _on_analysis_finished(self) -> None:
        self._analyzing = False

    def _show_failure(self, message: str) -> None:
        self._set_status(tr("分析失败：{error}").format(error=message), "error")
        self.analysis_failed.emit(message)

    def _show_result(self, result: SampleAnalysis) -> None:
        # Samples measure prose, not people: keep what the author wrote about voices and the source.
        kept = self.profile_or_none()
        profile = result.profile
        if kept is not None:
            profile = profile.model_copy(
                update={
                    "character_speech_patterns": kept.character_speech_patterns
                    or profile.character_speech_patterns,
                    "source_type": kept.source_type,
                    "reference_author": kept.reference_author,
                }
            )
        self.set_profile(profile)
        self._set_status(
            tr_n("已根据 {names}（共 {chars} 字）生成文风档案。检查、修改后点“保存”。", result.chars).format(
                names=join_list(result.files), chars=f"{result.chars:,}"
            ),
            "ok",
        )
        self.profile_analyzed.emit(profile)


class StyleProfileDialog(QDialog):
    """The style page in a dialog, for samples dropped on the main window."""

    def __init__(
        self,
        project: ProjectController,
        paths: Sequence[str] = (),
        parent: QWidget | None = None,
        *,
        jobs: JobRunner | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(tr("文风档案"))
        self.resize(960, 680)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.page = StylePage(project, jobs=jobs)
        self.page.profile_saved.connect(self.accept)
        layout.addWidget(self.page, 1)
        # One row of buttons: 还原 / 保存 from the page, then 关闭.
        self.close_button = QPushButton(tr("关闭"))
        self.close_button.clicked.connect(self.reject)
        self.page.button_row.addWidget(self.close_button)
        if paths:
            self.page.handle_files(list(paths))

    @classmethod
    def show_for(
        cls,
        parent: QWidget | None,
        project: ProjectController,
        paths: Sequence[str],
        *,
        jobs: JobRunner | None = None,
    ) -> StyleProfileDialog:
        """Open the style profile window-modally (``open()``, no nested loop) and analyze the dropped
        samples; the dialog deletes itself when closed. Returned so callers (and tests) can follow it."""
        dialog = cls(project, paths, parent, jobs=jobs)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog
