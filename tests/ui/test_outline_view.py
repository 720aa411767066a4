"""The outline view: chapter list, outline editor and contract form over the seed novel 《青石问道》."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.domain.outline import outline_field
from novel_desktop.storage import layout
from novel_desktop.ui.contract_form import ContractForm
from novel_desktop.ui.outline_view import OutlineView
from tests.fakes.alerts import RecordingAlerts

OUTLINE = "volumes/vol-01/outline.md"


@pytest.fixture
def view(qtbot: QtBot, project: ProjectController) -> OutlineView:
    widget = OutlineView(project)
    qtbot.addWidget(widget)
    widget.resize(1600, 1000)
    widget.show()
    return widget


def _objective_row(form: ContractForm, objective_id: str) -> int:
    for row in range(form.objectives.rowCount()):
        item = form.objectives.item(row, form.OBJ_ID)
        if item is not None and item.text() == objective_id:
            return row
    raise AssertionError(f"{objective_id} not in the objectives table")


def test_the_chapter_list_shows_outline_and_written_chapters_with_chars_and_score(view: OutlineView) -> None:
    rows = view.chapter_rows()
    assert [r[0] for r in rows] == ["1", "2", "3", "4", "5"]
    assert rows[0] == ("1", "药篓里的残玉", "628", "3.84")
    assert rows[1][1:] == ("夜半灵光", "605", "4.28")
    assert rows[2] == ("3", "开山", "未写", "")
    assert "## 第 5 章 另一半" in view.outline_edit.toPlainText()
    assert view.outline_stack.currentWidget() is not view.outline_empty


def test_the_view_opens_on_the_next_chapter_which_has_no_contract_yet(view: OutlineView) -> None:
    assert view.selected_chapter() == 3
    assert view.contract_stack.currentWidget() is view.contract_empty
    assert view.contract_empty_title.text() == "第 3 章还没有契约"


def test_a_contract_shows_its_parts_and_the_judges_verdict_per_objective(view: OutlineView) -> None:
    view.select_chapter(2)
    form = view.contract_form
    assert view.contract_stack.currentWidget() is form
    assert form.heading.text() == "第 2 章 契约"
    assert form.storyline_edit.text() == "main_arc"
    assert form.world_rules_edit.text() == "W-001, W-002, W-003"
    row = _objective_row(form, "OBJ-002-1")
    assert form.objectives.item(row, form.OBJ_DESCRIPTION).text() == "残玉夜里发光，陈老决定带林枫去苍梧山"
    assert form.objectives.item(row, form.OBJ_REQUIRED).checkState() == Qt.CheckState.Checked
    assert form.verdict_text("OBJ-002-1") == "✓ 通过"
    assert form.verdict_text("OBJ-002-3") == "✓ 通过"
    criteria = [form.criteria.item(i).text() for i in range(form.criteria.count())]
    assert "不违反 C-CHENLAO-001" in criteria
    updates = {
        form.foreshadow_updates.item(r, 0).text(): form.foreshadow_updates.item(r, 1).text()
        for r in range(form.foreshadow_updates.rowCount())
    }
    assert updates == {"broken_jade": "advanced", "chen_lao_past": "planted"}


def test_a_violated_objective_and_an_unjudged_one_read_differently(
    qtbot: QtBot, project: ProjectController, monkeypatch: pytest.MonkeyPatch
) -> None:
    stored = project.evaluation(1)
    assert stored is not None
    evaluation = json.loads(json.dumps(stored))
    evaluation["contract_verification"]["l3_checks"] = [{"id": "OBJ-001-1", "status": "violation"}]
    real = project.evaluation
    monkeypatch.setattr(project, "evaluation", lambda n: evaluation if n == 1 else real(n))
    view = OutlineView(project)
    qtbot.addWidget(view)
    view.select_chapter(1)
    assert view.contract_form.verdict_text("OBJ-001-1") == "✗ 违反"
    assert view.contract_form.verdict_text("OBJ-001-2") == "— 未评"


def test_editing_the_outline_headings_reparses_the_chapter_list_and_save_persists(
    view: OutlineView, project: ProjectController
) -> None:
    text = view.outline_edit.toPlainText().replace("## 第 3 章 开山", "## 第 3 章 开山门")
    text += "\n## 第 6 章 外门\n- **Storyline**: main_arc\n- **POV**: 苏清寒\n"
    view.outline_edit.setPlainText(text)
    rows = view.chapter_rows()
    assert [r[0] for r in rows][-1] == "6"
    assert rows[2][1] == "开山门"
    assert view.outline_state.text() == "大纲有未保存的修改"
    assert "开山门" not in (project.document(OUTLINE) or "")

    view.save_outline_button.click()
    saved = project.document(OUTLINE) or ""
    assert "## 第 3 章 开山门" in saved
    assert "## 第 6 章 外门" in saved
    assert view.outline_state.text() == "大纲已保存"


def test_ctrl_s_in_the_outline_editor_saves_the_outline(
    qtbot: QtBot, view: OutlineView, project: ProjectController
) -> None:
    view.activateWindow()
    view.outline_edit.setFocus()
    qtbot.waitUntil(view.outline_edit.hasFocus)
    view.outline_edit.moveCursor(view.outline_edit.textCursor().MoveOperation.End)
    # QTest types ASCII only; the Chinese text goes in through the editor, the shortcut through the keyboard.
    view.outline_edit.insertPlainText("\n卷末补记")
    qtbot.keyClick(view.outline_edit, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    assert (project.document(OUTLINE) or "").rstrip().endswith("卷末补记")


def test_editing_a_contract_saves_it_and_keeps_the_fields_the_form_does_not_show(
    view: OutlineView, project: ProjectController
) -> None:
    view.select_chapter(2)
    form = view.contract_form
    row = _objective_row(form, "OBJ-002-2")
    form.objectives.item(row, form.OBJ_DESCRIPTION).setText("残玉发光，暖意入体片刻即散")
    form.objectives.item(row, form.OBJ_REQUIRED).setCheckState(Qt.CheckState.Checked)
    form.criteria.item(0).setText("OBJ-002-1 在正文中明确体现（夜里）")
    assert form.dirty
    assert form.state_label.text() == "有未保存的修改"

    form.save_button.click()

    saved = project.document_json(layout.contract_path(1, 2))
    objective = next(o for o in saved["objectives"] if o["id"] == "OBJ-002-2")
    assert objective["description"] == "残玉发光，暖意入体片刻即散"
    assert objective["required"] is True
    # action and target have no column in the form; they must survive the round trip.
    assert (objective["action"], objective["target"]) == ("advance", "broken_jade")
    assert saved["acceptance_criteria"][0] == "OBJ-002-1 在正文中明确体现（夜里）"
    assert saved["storyline_context"]["line_arc_progress"] == "20%"
    assert saved["postconditions"]["state_changes"]["林枫"]["location"] == "苍梧山脚"
    assert not form.dirty
    assert form.state_label.text() == "已保存"


def test_an_invalid_contract_edit_shows_why_keeps_the_text_and_does_not_save(
    view: OutlineView, project: ProjectController
) -> None:
    before = project.document(layout.contract_path(1, 2))
    view.select_chapter(2)
    form = view.contract_form
    form.foreshadow_updates.item(0, 1).setText("完成")
    form.objectives.item(0, form.OBJ_ID).setText("")

    assert form.save() is False

    assert form.error_label.isVisible()
    message = form.error_label.text()
    assert "契约未保存" in message
    assert "「完成」无效" in message
    assert "目标第 1 行缺少 ID" in message
    assert form.foreshadow_updates.item(0, 1).text() == "完成"
    assert project.document(layout.contract_path(1, 2)) == before


def test_a_new_contract_for_an_unwritten_chapter_is_saved_with_the_outline_storyline(
    view: OutlineView, project: ProjectController
) -> None:
    view.select_chapter(3)
    new_button = next(
        b for b in view.contract_empty.findChildren(type(view.save_outline_button)) if b.text() == "新建契约"
    )
    new_button.click()
    form = view.contract_form
    assert view.contract_stack.currentWidget() is form
    assert form.storyline_edit.text() == "main_arc"
    form._add_objective()
    form.objectives.item(0, form.OBJ_DESCRIPTION).setText("林枫以残玉为凭获准参加考核")
    assert form.save()
    saved = project.document_json(layout.contract_path(1, 3))
    assert saved["chapter"] == 3
    assert saved["storyline_id"] == "main_arc"
    assert saved["objectives"][0]["id"] == "OBJ-003-1"
    assert saved["objectives"][0]["description"] == "林枫以残玉为凭获准参加考核"


def test_switching_chapters_with_unsaved_contract_edits_asks_and_can_cancel(
    view: OutlineView, alerts: RecordingAlerts
) -> None:
    view.select_chapter(2)
    view.contract_form.storyline_edit.setText("x")
    view.contract_form.storyline_edit.textEdited.emit("x")
    alerts.save_choice = "cancel"
    view.select_chapter(1)
    assert [kind for kind, _title, _text in alerts.shown] == ["save_changes"]
    assert "第 2 章的契约有未保存的修改" in alerts.texts[0]
    assert view.selected_chapter() == 2
    assert view.contract_form.storyline_edit.text() == "x"


def test_discarding_unsaved_contract_edits_moves_on_and_keeps_the_stored_contract(
    view: OutlineView, alerts: RecordingAlerts
) -> None:
    view.select_chapter(2)
    stored = view.contract_form.storyline_edit.text()
    view.contract_form.storyline_edit.setText("x")
    view.contract_form.storyline_edit.textEdited.emit("x")
    alerts.save_choice = "discard"
    view.select_chapter(1)
    assert view.selected_chapter() == 1
    assert not view.contract_form.dirty
    view.select_chapter(2)
    assert view.contract_form.storyline_edit.text() == stored


def test_a_novel_without_outline_or_contracts_says_how_to_get_them(qtbot: QtBot, tmp_path: Path) -> None:
    project = ProjectController()
    project.create(tmp_path / "空白.novel", title="空白", genre=None, platform="qidian")
    try:
        view = OutlineView(project)
        qtbot.addWidget(view)
        assert view.outline_stack.currentWidget() is view.outline_empty
        texts = " ".join(
            label.text() for label in view.outline_empty.findChildren(type(view.outline_heading))
        )
        assert "本卷还没有大纲" in texts
        assert "novel outline set" in texts
        assert view.chapter_rows() == []
        start = next(
            b
            for b in view.outline_empty.findChildren(type(view.save_outline_button))
            if b.text() == "开始编写大纲"
        )
        start.click()
        assert view.outline_stack.currentWidget() is not view.outline_empty
        assert [r[0] for r in view.chapter_rows()] == ["1"]
        view.save_outline()
        assert "## 第 1 章" in (project.document(OUTLINE) or "")
    finally:
        project.close()


def test_outline_fields_are_read_from_bold_bullets() -> None:
    section = "## 第 1 章 药篓里的残玉\n- **Storyline**: main_arc\n- **POV**: 林枫\n- 地点：青石镇"
    assert outline_field(section, "storyline") == "main_arc"
    assert outline_field(section, "POV") == "林枫"
    assert outline_field(section, "location") == "青石镇"
    assert outline_field(section, "conflict") == ""


def test_the_english_catalogue_translates_every_string_of_the_three_views_with_the_same_slots() -> None:
    import ast
    import re

    from novel_desktop.paths import resource

    catalogue = json.loads(resource("i18n", "en", "views.json").read_text(encoding="utf-8"))
    package = Path(__file__).resolve().parents[2] / "novel_desktop" / "ui"
    missing = []
    for name in (
        "outline_view.py",
        "contract_form.py",
        "storyline_view.py",
        "storyline_canvas.py",
        "foreshadowing_view.py",
    ):
        for node in ast.walk(ast.parse((package / name).read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "tr" and node.args:
                arg = node.args[0]
                if (
                    isinstance(arg, ast.Constant)
                    and isinstance(arg.value, str)
                    and arg.value not in catalogue
                ):
                    missing.append(arg.value)
    assert missing == []
    for source, english in catalogue.items():
        assert set(re.findall(r"\{\w+\}", source)) == set(re.findall(r"\{\w+\}", english)), source


def test_in_english_the_contract_form_reads_in_english(qtbot: QtBot, project: ProjectController) -> None:
    from novel_desktop import i18n

    i18n.set_language("en")
    try:
        view = OutlineView(project)
        qtbot.addWidget(view)
        view.select_chapter(2)
        assert view.contract_form.heading.text() == "Chapter 2 contract"
        assert view.contract_form.verdict_text("OBJ-002-1") == "✓ pass"
        assert view.chapter_rows()[2][2] == "not written"
    finally:
        i18n.set_language("zh")
