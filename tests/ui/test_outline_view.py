"""The outline view: chapter list, outline editor and contract form over the seed novel 《青石问道》."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPlainTextEdit
from pytestqt.qtbot import QtBot

from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.domain.outline import outline_field, outline_sections
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
    assert rows[2] == ("3", "开山", "", "")
    assert view.outline_stack.currentWidget() is not view.outline_empty
    # A tree: the volume at the top, its chapters under it with contract and written/planned columns.
    tree = view.chapter_list
    top = tree.topLevelItem(0)
    assert top is not None and top.text(0) == "第 1 卷" and top.childCount() == 5
    first, third = top.child(0), top.child(2)
    assert first is not None and third is not None
    assert (first.text(4), first.text(5)) == ("✓", "已写")
    assert (third.text(4), third.text(5)) == ("", "计划")
    assert top.text(5) == "2/5" and top.toolTip(5) == "2/5 章已写"


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


def test_selecting_a_chapter_fills_the_outline_form_with_its_fields(view: OutlineView) -> None:
    view.select_chapter(2)
    form = view.form
    assert form.chapter == 2 and form.chapter_box.title() == "第 2 章大纲"
    assert form.title_edit.text() == "夜半灵光"
    assert form.field_edits["Storyline"].text() == "main_arc"
    assert form.field_edits["POV"].text() == "林枫"
    assert form.field_edits["Location"].text() == "药铺阁楼 → 苍梧山脚"
    assert form.field_edits["Conflict"].text() == "残玉发光，陈老被迫决定离开青石镇"
    assert form.field_edits["StateChanges"].text() == "两人到达苍梧山脚"
    assert form.volume_title.text() == "第一卷 入山"
    assert form.volume_summary.toPlainText().startswith("本卷 5 章")
    assert not form.notes_edit.toPlainText()


def test_saving_a_changed_conflict_changes_only_that_line_of_the_stored_outline(
    view: OutlineView, project: ProjectController
) -> None:
    before = project.document(OUTLINE) or ""
    view.select_chapter(3)
    edit = view.form.field_edits["Conflict"]
    edit.setText("守门弟子嫌他年纪大，当众羞辱")
    edit.textEdited.emit(edit.text())
    assert view.outline_state.text() == "大纲有未保存的修改"
    assert project.document(OUTLINE) == before  # nothing saved by itself
    view.save_outline_button.click()
    after = project.document(OUTLINE) or ""
    changed = [(a, b) for a, b in zip(before.splitlines(True), after.splitlines(True), strict=True) if a != b]
    assert changed == [
        ("- **Conflict**: 林枫年纪超线，守门弟子拒收\n", "- **Conflict**: 守门弟子嫌他年纪大，当众羞辱\n")
    ]
    assert view.outline_state.text() == "大纲已保存"


def test_a_renamed_chapter_and_its_notes_keep_every_other_line(
    view: OutlineView, project: ProjectController
) -> None:
    odd = (project.document(OUTLINE) or "").replace(
        "- **Arc**: 林枫第一次靠自己争取\n",
        "- **Arc**: 林枫第一次靠自己争取\n- **Mood**: 压抑\n  未知的缩进行\n",
    )
    project.save_document(OUTLINE, odd)
    view.refresh()
    view.select_chapter(3)
    assert view.form.notes_edit.toPlainText() == "- **Mood**: 压抑\n  未知的缩进行"
    view.form.title_edit.setText("开山门")
    view.form.title_edit.textEdited.emit("开山门")
    view.save_outline()
    saved = project.document(OUTLINE) or ""
    assert saved == odd.replace("## 第 3 章 开山\n", "## 第 3 章 开山门\n")
    assert view.chapter_rows()[2][1] == "开山门"


def test_ctrl_s_in_the_outline_form_saves_the_outline(
    qtbot: QtBot, view: OutlineView, project: ProjectController
) -> None:
    view.select_chapter(4)
    edit = view.form.field_edits["POV"]
    view.activateWindow()
    edit.setFocus()
    qtbot.waitUntil(edit.hasFocus)
    # QTest types ASCII only; the Chinese text goes in through the field, the shortcut through the keyboard.
    edit.setText("苏清寒")
    edit.textEdited.emit("苏清寒")
    qtbot.keyClick(edit, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    section = outline_sections(project.document(OUTLINE) or "")[4]
    assert outline_field(section, "POV") == "苏清寒"


def test_add_chapter_appends_a_section_after_the_last_and_selects_it(
    view: OutlineView, project: ProjectController
) -> None:
    before = project.document(OUTLINE) or ""
    view.add_chapter_button.click()
    after = project.document(OUTLINE) or ""
    assert after.startswith(before.rstrip("\n") + "\n\n## 第 6 章\n- **Storyline**:")
    assert [r[0] for r in view.chapter_rows()][-1] == "6"
    assert view.selected_chapter() == 6 and view.form.chapter == 6
    view.form.title_edit.setText("外门")
    view.form.title_edit.textEdited.emit("外门")
    view.form.field_edits["Conflict"].setText("分院不公")
    view.save_outline()
    section = outline_sections(project.document(OUTLINE) or "")[6]
    assert section.splitlines()[0] == "## 第 6 章 外门"
    assert outline_field(section, "Conflict") == "分院不公"


def test_export_writes_the_volume_outline_to_a_markdown_file(
    view: OutlineView, project: ProjectController, tmp_path: Path, alerts: RecordingAlerts
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    target = out / "第1卷大纲.md"
    assert view.export_markdown(target) == target
    assert target.read_text(encoding="utf-8") == project.document(OUTLINE)
    assert "大纲已导出到" in view.outline_state.text()
    assert list(out.iterdir()) == [target]  # the temp file was renamed, nothing else left
    # A folder that does not exist: the author is told why, nothing is written.
    assert view.export_markdown(out / "missing" / "x.md") is None
    assert alerts.shown[-1][0] == "warning" and "目录不存在" in alerts.shown[-1][2]
    assert list(out.iterdir()) == [target]


def test_view_markdown_shows_the_outline_read_only(view: OutlineView, project: ProjectController) -> None:
    dialog = view.show_markdown()
    text = dialog.findChild(QPlainTextEdit, "OutlineMarkdown")
    assert text is not None and text.isReadOnly()
    assert text.toPlainText() == project.document(OUTLINE)
    dialog.close()


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
        assert (project.document(OUTLINE) or "").startswith("# 第 1 卷\n\n## 第 1 章\n- **Storyline**:")
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
    catalogue.update(json.loads(resource("i18n", "en", "outline.json").read_text(encoding="utf-8")))
    package = Path(__file__).resolve().parents[2] / "novel_desktop" / "ui"
    missing = []
    for name in (
        "outline_view.py",
        "outline_sections.py",
        "outline_form.py",
        "outline_tree.py",
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
    from novel_desktop.ui.outline_form import FIELD_LABELS

    missing += [label for label in FIELD_LABELS.values() if label not in catalogue]
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
        volume = view.chapter_list.volume_item(1)
        planned = volume.child(2) if volume is not None else None
        assert planned is not None and planned.text(5) == "Planned"
    finally:
        i18n.set_language("zh")


def _contract_for(project: ProjectController, chapter: int, storyline: str) -> None:
    data = json.loads(project.document(layout.contract_path(1, 2)) or "{}")
    project.save_document(
        layout.contract_path(1, chapter),
        json.dumps({**data, "chapter": chapter, "storyline_id": storyline}, ensure_ascii=False),
    )


def _titles(project: ProjectController) -> dict[int, str]:
    return {n: s.splitlines()[0] for n, s in outline_sections(project.document(OUTLINE) or "").items()}


def test_moving_a_planned_section_swaps_it_with_its_neighbour_and_its_contract_follows(
    view: OutlineView, project: ProjectController, alerts: RecordingAlerts
) -> None:
    _contract_for(project, 4, "line_four")
    view.refresh()
    before = _titles(project)
    view.select_chapter(4)
    tools = view.sections
    assert tools.up_button.isEnabled() and tools.down_button.isEnabled() and tools.delete_button.isEnabled()
    tools.up_button.click()
    after = _titles(project)
    # The text of 第 4 章 is now 第 3 章 and the other way round: the numbers stay in order.
    assert after[3] == before[4].replace("4", "3", 1) and after[4] == before[3].replace("3", "4", 1)
    assert view.selected_chapter() == 3 and view.form.chapter == 3
    assert json.loads(project.document(layout.contract_path(1, 3)) or "{}")["storyline_id"] == "line_four"
    assert json.loads(project.document(layout.contract_path(1, 3)) or "{}")["chapter"] == 3
    assert project.document(layout.contract_path(1, 4)) is None  # 第 3 章 had no contract: none moves up
    # The first planned chapter cannot move above a written one, nor can a written chapter move.
    assert not tools.up_button.isEnabled()
    view.select_chapter(2)
    assert not (
        tools.up_button.isEnabled() or tools.down_button.isEnabled() or tools.delete_button.isEnabled()
    )
    assert alerts.shown == []


def test_deleting_a_planned_section_renumbers_the_later_ones_and_drops_its_contract(
    view: OutlineView, project: ProjectController, alerts: RecordingAlerts
) -> None:
    _contract_for(project, 3, "line_three")
    _contract_for(project, 4, "line_four")
    schedule_path = f"{layout.volume_dir(1)}/storyline-schedule.json"
    schedule = json.loads(project.document(schedule_path) or '{"volume": 1}')
    # Meetings planned at chapters 2-3 and 4-5: the second follows its chapters down one.
    schedule["convergence_events"] = [
        {"chapter_range": [2, 3], "involved_storylines": ["a", "b"], "trigger": "相遇"},
        {"chapter_range": [4, 5], "involved_storylines": ["a", "b"], "trigger": "再会"},
    ]
    project.save_document(schedule_path, json.dumps(schedule, ensure_ascii=False))
    view.refresh()
    before = _titles(project)
    view.select_chapter(3)
    alerts.answer = False
    view.sections.delete_button.click()
    assert _titles(project) == before  # 否: nothing changed
    alerts.answer = True
    view.sections.delete_button.click()
    assert "删除第 3 章的大纲" in alerts.shown[-1][1] and "第 4 章变成第 3 章" in alerts.shown[-1][2]
    after = _titles(project)
    assert sorted(after) == [1, 2, 3, 4]
    assert after[3] == before[4].replace("4", "3", 1) and after[4] == before[5].replace("5", "4", 1)
    assert [r[0] for r in view.chapter_rows()] == ["1", "2", "3", "4"]
    third = json.loads(project.document(layout.contract_path(1, 3)) or "{}")
    assert (third["chapter"], third["storyline_id"]) == (3, "line_four")  # 4's contract, now 3's
    assert project.document(layout.contract_path(1, 4)) is None
    assert view.selected_chapter() == 3 and view.form.title_edit.text() == before[4].split("章", 1)[1].strip()
    events = json.loads(project.document(schedule_path) or "{}")["convergence_events"]
    assert [e["chapter_range"] for e in events] == [[2, 2], [3, 4]]
    assert [e["trigger"] for e in events] == ["相遇", "再会"]
