"""The proposal dialog: what an agent invents is shown as a form the author edits, and the answer carries
exactly what the author kept (issue 14, item 3)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import qasync
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from novel_desktop.domain.novel_ask import AnswerSpec
from novel_desktop.domain.proposals import Proposal, read_review, review_spec
from novel_desktop.pipeline.interaction import InteractionRequest
from novel_desktop.ui.ask_dialog import dialog_asker
from novel_desktop.ui.character_form import CharacterForm
from novel_desktop.ui.proposal_dialog import ProposalDialog
from novel_desktop.ui.proposal_forms import StorylinesForm, VolumePlanForm, form_for
from novel_desktop.ui.world_form import WorldForm

SEED = Path(__file__).resolve().parents[1] / "fixtures" / "seed_project"


def _json(relative: str) -> Any:
    return json.loads((SEED / relative).read_text(encoding="utf-8"))


def world_payload() -> dict[str, Any]:
    rules = _json("world/rules.json")["rules"]
    doc = (SEED / "world" / "rules.md").read_text(encoding="utf-8")
    return {"rules": rules, "documents": [{"file": "rules.md", "content": doc}]}


def characters_payload() -> dict[str, Any]:
    characters = [
        _json(f"characters/active/{p.name}") for p in sorted((SEED / "characters/active").glob("*.json"))
    ]
    return {
        "characters": characters,
        "relationships": _json("characters/relationships.json")["relationships"],
    }


def plan_payload() -> dict[str, Any]:
    vol = "volumes/vol-01"
    return {
        "outline": (SEED / vol / "outline.md").read_text(encoding="utf-8"),
        "chapter_contracts": [_json(f"{vol}/chapter-contracts/chapter-00{n}.json") for n in (1, 2)],
        "storyline_schedule": _json(f"{vol}/storyline-schedule.json"),
    }


def _proposal(kind: str, payload: dict[str, Any]) -> Proposal:
    return Proposal(kind=kind, title="快速起步：世界规则", payload=payload, note="按你的题材和主角生成。")  # type: ignore[arg-type]


def _dialog(qtbot: QtBot, proposal: Proposal) -> ProposalDialog:
    dialog = ProposalDialog(proposal)
    qtbot.addWidget(dialog)
    return dialog


def _ask_through_the_window(
    qtbot: QtBot, qloop: qasync.QEventLoop, proposal: Proposal, act: Any
) -> AnswerSpec | None:
    """The pipeline's question with a proposal, answered through the window's asker; ``act`` works the dialog."""
    window = QWidget()
    qtbot.addWidget(window)
    window.show()
    request = InteractionRequest(1, review_spec(proposal), "staging/novel-ask/x.json", "test", "", proposal)

    async def flow() -> AnswerSpec | None:
        task = asyncio.ensure_future(dialog_asker(window)(request))
        while not (shown := [w for w in window.findChildren(ProposalDialog) if w.isVisible()]):
            await asyncio.sleep(0.01)
        act(shown[0])
        return await asyncio.wait_for(task, 10)

    return qloop.run_until_complete(flow())


def test_a_world_proposal_is_a_form_and_saving_edits_answers_exactly_what_the_author_kept(
    qtbot: QtBot, qloop: qasync.QEventLoop
) -> None:
    proposal = _proposal("world", world_payload())

    def edit(dialog: ProposalDialog) -> None:
        form = dialog.form
        assert isinstance(form, WorldForm)
        assert dialog.windowTitle() == "快速起步：世界规则"
        assert dialog.note.text() == "按你的题材和主角生成。"
        rules = form.rules
        assert [rules.text(r, "id") for r in range(rules.row_count())] == ["W-001", "W-002", "W-003"]
        rules.set_text(rules.find_row("id", "W-001"), "rule", "凡人须引气入体方可修炼")
        rules.table.selectRow(rules.find_row("id", "W-002"))
        rules.remove_button.click()
        dialog.save_button.click()

    answer = _ask_through_the_window(qtbot, qloop, proposal, edit)
    assert answer is not None
    decision = read_review(proposal, answer)
    assert decision.action == "edit"
    assert decision.payload is not None
    rules = decision.payload["rules"]
    assert [r["id"] for r in rules] == ["W-001", "W-003"]
    assert rules[0]["rule"] == "凡人须引气入体方可修炼"
    # Everything else of the rules is as proposed (hard/soft, exceptions, chapters kept).
    original = {r["id"]: r for r in world_payload()["rules"]}
    assert rules[1] == original["W-003"]
    assert {k: v for k, v in rules[0].items() if k != "rule"} == {
        k: v for k, v in original["W-001"].items() if k != "rule"
    }
    assert decision.payload["documents"] == world_payload()["documents"]


def test_accepting_an_unchanged_proposal_answers_accept_and_cancel_answers_nothing(
    qtbot: QtBot, qloop: qasync.QEventLoop
) -> None:
    proposal = _proposal("world", world_payload())
    answer = _ask_through_the_window(qtbot, qloop, proposal, lambda d: d.accept_button.click())
    assert answer is not None and read_review(proposal, answer).action == "accept"
    assert _ask_through_the_window(qtbot, qloop, proposal, lambda d: d.cancel_button.click()) is None


def test_an_invalid_edit_is_explained_in_chinese_nothing_is_returned_and_everything_typed_stays(
    qtbot: QtBot,
) -> None:
    dialog = _dialog(qtbot, _proposal("world", world_payload()))
    dialog.show()
    form = dialog.form
    assert isinstance(form, WorldForm)
    rules = form.rules
    rules.set_text(rules.find_row("id", "W-001"), "rule", "")
    rules.set_text(rules.find_row("id", "W-002"), "id", "W-003")
    rules.set_text(2, "category", "社会")
    dialog.save_button.click()
    assert dialog.isVisible() and dialog.answer() is None
    shown = dialog.error_label.text()
    assert dialog.error_label.isVisible()
    assert "规则 W-001：「规则」不能为空" in shown
    assert "规则编号 W-003 重复" in shown
    # 接受 checks the same way.
    dialog.accept_button.click()
    assert dialog.isVisible() and dialog.answer() is None
    assert (
        rules.text(0, "rule") == "" and rules.text(1, "id") == "W-003" and rules.text(2, "category") == "社会"
    )

    # Fixing it lets 保存修改 through.
    rules.set_text(0, "rule", "引气入体方可修炼")
    rules.set_text(1, "id", "W-002")
    dialog.save_button.click()
    answer = dialog.answer()
    assert answer is not None and not dialog.isVisible()
    edited = json.loads(str(answer.answers["edited"]))
    assert [r["category"] for r in edited["rules"]] == ["magic_system", "geography", "社会"]


def test_a_bad_id_is_explained_in_chinese(qtbot: QtBot) -> None:
    dialog = _dialog(qtbot, _proposal("world", world_payload()))
    rules = dialog.form.rules  # type: ignore[attr-defined]
    rules.set_text(0, "id", "规则一")
    dialog.save_button.click()
    assert dialog.answer() is None
    assert "规则 · 第 1 条 · 编号：格式不对" in dialog.error_label.text()


def test_regenerate_asks_for_notes_and_answers_them(qtbot: QtBot) -> None:
    proposal = _proposal("world", world_payload())
    dialog = _dialog(qtbot, proposal)
    dialog.show()
    dialog.regenerate_button.click()
    assert dialog.answer() is None and "写下要智能体改什么" in dialog.error_label.text()
    dialog.changes_edit.setPlainText("灵气等级改成五级")
    dialog.regenerate_button.click()
    answer = dialog.answer()
    assert answer is not None
    decision = read_review(proposal, answer)
    assert decision.action == "regenerate" and decision.changes == "灵气等级改成五级"


def test_without_the_regenerate_option_the_dialog_offers_only_accept_and_save(qtbot: QtBot) -> None:
    proposal = _proposal("world", world_payload())
    dialog = ProposalDialog(proposal, review_spec(proposal, regenerate=False))
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.accept_button.isVisible() and dialog.save_button.isVisible()
    assert not dialog.regenerate_button.isVisible() and not dialog.changes_edit.isVisible()


def test_pressing_accept_after_editing_stores_what_the_author_sees(qtbot: QtBot) -> None:
    proposal = _proposal("world", world_payload())
    dialog = _dialog(qtbot, proposal)
    dialog.form.rules.set_text(0, "constraint_type", "soft")  # type: ignore[attr-defined]
    dialog.accept_button.click()
    answer = dialog.answer()
    assert answer is not None
    decision = read_review(proposal, answer)
    assert decision.action == "edit" and decision.payload is not None
    assert decision.payload["rules"][0]["constraint_type"] == "soft"


def test_world_documents_can_be_edited_added_and_deleted(qtbot: QtBot) -> None:
    form = form_for("world", world_payload())
    qtbot.addWidget(form)
    assert isinstance(form, WorldForm)
    assert form.doc_name.text() == "rules.md" and "青石镇" in form.doc_text.toPlainText()
    form.doc_text.setPlainText("改过的说明")
    form.add_document()
    form.doc_name.setText("sects.md")
    form.doc_name.textEdited.emit("sects.md")
    form.doc_text.setPlainText("苍梧宗")
    payload, problems = form.collect()
    assert problems == [] and payload is not None
    assert payload["documents"] == [
        {"file": "rules.md", "content": "改过的说明"},
        {"file": "sects.md", "content": "苍梧宗"},
    ]
    form.select_document("rules.md")
    form.remove_document()
    payload, _ = form.collect()
    assert payload is not None and [d["file"] for d in payload["documents"]] == ["sects.md"]


def test_the_character_form_edits_a_character_its_contracts_and_relationships(qtbot: QtBot) -> None:
    form = form_for("characters", characters_payload())
    qtbot.addWidget(form)
    assert isinstance(form, CharacterForm)
    assert form.history_slot.objectName() == "ContractHistorySlot"
    assert form.select_character("lin-feng")
    assert form.line_edits["name"].text() == "林枫"
    contracts = form.contracts
    row = contracts.find_row("id", "C-LINFENG-001")
    contracts.set_text(row, "valid_until", "4")
    contracts.add_row()
    new = contracts.row_count() - 1
    assert contracts.text(new, "id") == "C-LINFENG-003"
    contracts.set_text(new, "type", "capability")
    contracts.set_text(new, "rule", "引气入体后可用最粗浅的法术")
    contracts.set_text(new, "valid_from_chapter", "5")
    form.goals_edit.setPlainText("弄清残玉的来历\n进入苍梧宗\n护住陈老")
    # Another character, then back: nothing typed is lost.
    assert form.select_character("chen-lao")
    form.relationships.table.selectRow(1)
    form.relationships.remove_selected()
    payload, problems = form.collect()
    assert problems == [] and payload is not None
    lin = next(c for c in payload["characters"] if c["id"] == "lin-feng")
    assert lin["goals"][-1] == "护住陈老"
    assert lin["aliases"] == ["小枫"]  # fields the form does not show are kept
    by_id = {c["id"]: c for c in lin["contracts"]}
    assert by_id["C-LINFENG-001"]["valid_until"] == 4
    assert by_id["C-LINFENG-003"] == {
        "id": "C-LINFENG-003",
        "type": "capability",
        "rule": "引气入体后可用最粗浅的法术",
        "valid_from_chapter": 5,
        "exceptions": [],
    }
    assert len(payload["relationships"]) == 1


def test_the_character_form_explains_an_empty_name_and_a_chapter_that_is_not_a_number(qtbot: QtBot) -> None:
    form = form_for("characters", characters_payload())
    qtbot.addWidget(form)
    assert isinstance(form, CharacterForm)
    form.add_character()
    form.contracts.add_row()
    form.contracts.set_text(0, "rule", "话少")
    form.contracts.set_text(0, "type", "personality")
    form.contracts.set_text(0, "valid_from_chapter", "第三章")
    payload, problems = form.collect()
    assert payload is None
    assert any("名字不能为空" in p for p in problems)
    assert any("「起始章」应填整数" in p for p in problems)
    form.remove_character()
    payload, problems = form.collect()
    assert problems == [] and payload is not None and len(payload["characters"]) == 2


def test_the_storylines_form_edits_adds_and_checks_relationships(qtbot: QtBot) -> None:
    form = form_for("storylines", _json("storylines/storylines.json"))
    qtbot.addWidget(form)
    assert isinstance(form, StorylinesForm)
    lines = form.storylines
    lines.add_row()
    lines.set_text(1, "id", "sect_war")
    lines.set_text(1, "name", "宗门暗战")
    lines.set_text(1, "type", "faction_conflict")
    lines.set_text(1, "status", "active")
    form.links.add_row({"from": "main_arc", "to": "sect_wars", "type": "交汇"})
    payload, problems = form.collect()
    assert payload is None and any("没有标识为 sect_wars 的故事线" in p for p in problems)
    form.links.set_text(0, "to", "sect_war")
    payload, problems = form.collect()
    assert problems == [] and payload is not None
    assert payload["storylines"][1]["status"] == "active"
    assert payload["storylines"][0]["affiliated_factions"] == ["苍梧宗"]


def test_the_volume_plan_form_edits_one_chapter_contract_at_a_time(qtbot: QtBot) -> None:
    form = form_for("volume_plan", plan_payload())
    qtbot.addWidget(form)
    assert isinstance(form, VolumePlanForm)
    assert form.chapters() == [1, 2]
    contract = form.contract_form
    assert not contract.save_button.isVisible()
    assert form.select_chapter(2)
    contract.storyline_edit.setText("")
    contract.foreshadow_updates.setRowCount(0)
    contract.foreshadow_updates.insertRow(0)
    from PySide6.QtWidgets import QTableWidgetItem

    contract.foreshadow_updates.setItem(0, 0, QTableWidgetItem("jade_origin"))
    contract.foreshadow_updates.setItem(0, 1, QTableWidgetItem("埋下"))
    # An invalid contract keeps the chapter shown until it is fixed.
    assert not form.select_chapter(1)
    assert "第 2 章的契约有问题" in form.switch_label.text()
    contract.foreshadow_updates.item(0, 1).setText("planted")
    assert form.select_chapter(1)
    form.add_chapter(3)
    contract.world_rules_edit.setText("W-001")
    form.outline_edit.appendPlainText("\n### 第 3 章 入山\n")
    payload, problems = form.collect()
    assert problems == [] and payload is not None
    contracts = {c["chapter"]: c for c in payload["chapter_contracts"]}
    assert sorted(contracts) == [1, 2, 3]
    assert contracts[2]["postconditions"]["foreshadowing_updates"] == {"jade_origin": "planted"}
    assert "storyline_id" not in contracts[2]
    assert contracts[3]["preconditions"]["required_world_rules"] == ["W-001"]
    assert payload["storyline_schedule"] == plan_payload()["storyline_schedule"]
    form.select_chapter(3)
    form.remove_chapter()
    payload, _ = form.collect()
    assert payload is not None and [c["chapter"] for c in payload["chapter_contracts"]] == [1, 2]


def test_the_english_catalogues_translate_every_string_of_the_forms_with_the_same_slots() -> None:
    import ast
    import re

    from novel_desktop.paths import resource

    catalogue: dict[str, str] = {}
    for path in sorted(resource("i18n", "en").glob("*.json")):
        catalogue.update(json.loads(path.read_text(encoding="utf-8")))
    package = Path(__file__).resolve().parents[2] / "novel_desktop"
    missing = []
    for name in (
        "ui/payload_table.py",
        "ui/world_form.py",
        "ui/character_form.py",
        "ui/proposal_forms.py",
        "ui/proposal_dialog.py",
        "ui/flows/setting_edits.py",
        "controllers/setting_edits.py",
    ):
        for node in ast.walk(ast.parse((package / name).read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            called = getattr(node.func, "id", None)
            # tr("…") and the column headers, which the table passes through tr().
            args = node.args[:1] if called == "tr" else node.args[1:2] if called == "Column" else []
            for arg in args:
                if (
                    isinstance(arg, ast.Constant)
                    and isinstance(arg.value, str)
                    and arg.value not in catalogue
                ):
                    missing.append(arg.value)
    assert missing == []
    mine = json.loads(resource("i18n", "en", "proposal_forms.json").read_text(encoding="utf-8"))
    for source, english in mine.items():
        assert set(re.findall(r"\{\w+\}", source)) == set(re.findall(r"\{\w+\}", english)), source


def test_the_volume_plan_review_offers_its_own_option_with_its_value(qtbot: QtBot) -> None:
    """The plan review's 调整章数 is a button of the dialog too: it needs the number, and answers with it."""
    from novel_desktop.pipeline.volume_plan import ADJUST, plan_review_spec

    proposal = Proposal(kind="volume_plan", title="第 1 卷大纲", payload=plan_payload())
    dialog = ProposalDialog(proposal, plan_review_spec(proposal, 1, 1, 2, "两章"))
    qtbot.addWidget(dialog)
    button = dialog.extra_buttons[ADJUST]
    button.click()
    assert dialog.answer() is None and dialog.error_label.text().startswith("请先填写")
    dialog.extra_edits["chapter_count"].setText("40")
    button.click()
    answer = dialog.answer()
    assert answer is not None
    assert answer.answers["review_action"] == ADJUST and answer.answers["chapter_count"] == "40"
    decision = read_review(proposal, answer)
    assert decision.action == "other" and decision.choice == ADJUST
