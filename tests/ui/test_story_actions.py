"""The 故事 menu: on-demand actions from the window, each asking for its input in a dialog and running as the
pipeline controller's task against the fake server; bad input gets a Chinese message and changes nothing."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import qasync
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QFileDialog, QInputDialog
from pytestqt.qtbot import QtBot

from novel_desktop.config import AppSettings
from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.ui.ask_dialog import AskDialog
from novel_desktop.ui.main_window import MainWindow
from novel_desktop.ui.project_tree import CHARACTER
from novel_desktop.ui.proposal_dialog import ProposalDialog
from novel_desktop.ui.story_actions import parse_chapter_range
from tests.e2e.replies import judge_json
from tests.fakes.alerts import RecordingAlerts
from tests.fakes.anthropic_server import BATCH_ROLE, FakeAnthropicServer
from tests.pipeline.test_on_demand import SPRING_RULE, WEAVER, WORLD_CONFLICT, _world_reply

pytestmark = pytest.mark.usefixtures("gui_thread_gc")


@pytest.fixture
def window(qtbot: QtBot, project: ProjectController, monkeypatch: pytest.MonkeyPatch) -> MainWindow:
    win = MainWindow(project=project, settings=AppSettings())
    qtbot.addWidget(win)
    win._update_for_project()
    win.show_workspace()
    win.show()
    return win


class Messages:
    """The alerts of the test, as (title, text)."""

    def __init__(self, alerts: RecordingAlerts) -> None:
        self.alerts = alerts

    @property
    def shown(self) -> list[tuple[str, str]]:
        return [(title, text) for _kind, title, text in self.alerts.shown]


def run(qloop: qasync.QEventLoop, window: MainWindow, start: Callable[[], None]) -> str:
    """Trigger an action; when it starts a run, wait for it and return what it reported."""
    reported: list[str] = []

    async def main() -> None:
        done = asyncio.get_running_loop().create_future()
        window.pipeline.lifecycle_finished.connect(lambda _n, text: reported.append(text))
        window.pipeline.finished.connect(lambda: done.done() or done.set_result(None))
        start()
        if window.pipeline.running:
            await asyncio.wait_for(done, 60)

    qloop.run_until_complete(main())
    return "\n".join(reported)


def accept_review(window: MainWindow) -> str | None:
    """Accept (接受) the proposal review open over the window — shown as its forms, a ProposalDialog — if that
    is the question; its topic."""
    dialog = next((d for d in window.findChildren(ProposalDialog) if d.isVisible()), None)
    if dialog is None:
        return None
    assert not any(d.isVisible() for d in window.findChildren(AskDialog)), "a review is never an AskDialog"
    dialog.accept_button.click()
    assert not dialog.isVisible(), dialog.error_label.text()
    return dialog.spec.topic


def test_the_story_menu_lists_the_actions_and_follows_the_open_novel(window: MainWindow) -> None:
    titles = [a.text() for a in window.story_menu.actions() if not a.isSeparator()]
    assert titles == [
        "添加角色…",
        "角色退场…",
        "扩展世界观…",
        "添加故事线…",
        "导入研究资料…",
        "重新评审本章",
        "按评审意见修改建议",
        "批量重新评审…",
        "修改世界规则…",
        "修改角色与契约…",
        "修改故事线…",
        "修改卷大纲与章节契约…",
        "已移除的章节…",
        "上下文检查…",
    ]
    assert all(a.isEnabled() for a in window.story.actions)
    window.close_novel()
    assert not any(a.isEnabled() for a in window.story.actions)


def test_add_a_character_from_a_description(
    qloop: qasync.QEventLoop, window: MainWindow, fake: FakeAnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake.set_default("character_weaver", json.dumps(WEAVER, ensure_ascii=False))
    monkeypatch.setattr(
        QInputDialog, "getMultiLineText", staticmethod(lambda *a, **k: ("外门执事的女儿，性格活泼", True))
    )
    reviewed: list[str | None] = []
    window.pipeline.question_asked.connect(
        lambda _r: QTimer.singleShot(50, lambda: reviewed.append(accept_review(window)))
    )
    report = run(qloop, window, window.story.add_character_action.trigger)
    # The new character was shown for approval before it was stored.
    assert reviewed == ["characters review"]
    assert "苏婉" in report
    assert window.project.document_json("characters/active/su-wan.json")["name"] == "苏婉"
    assert "外门执事的女儿" in json.dumps(fake.requests_for("character_weaver")[0].body, ensure_ascii=False)
    # The project tree lists the new character.
    section = window.tree.model.section(CHARACTER)
    assert section is not None and "苏婉" in [n.label for n in section.children]


def test_retire_a_character_picked_from_the_active_ones(
    qloop: qasync.QEventLoop, window: MainWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    offered: list[list[str]] = []

    def get_item(_p: Any, _t: str, _l: str, items: list[str], *_a: Any) -> tuple[str, bool]:
        offered.append(list(items))
        return next(i for i in items if "chen-lao" in i), True

    monkeypatch.setattr(QInputDialog, "getItem", staticmethod(get_item))
    monkeypatch.setattr(QInputDialog, "getText", staticmethod(lambda *a, **k: ("旧事了结", True)))
    report = run(qloop, window, window.story.retire_character_action.trigger)
    assert len(offered[0]) == 2 and any("陈老" in i for i in offered[0])
    assert "已退场" in report
    assert window.project.document("characters/active/chen-lao.json") is None
    assert window.project.document_json("characters/retired/chen-lao.json")["status"] == "retired"


def test_a_storyline_id_that_is_not_a_slug_is_refused_in_chinese(
    qloop: qasync.QEventLoop, window: MainWindow, monkeypatch: pytest.MonkeyPatch, alerts: RecordingAlerts
) -> None:
    messages = Messages(alerts)
    answers = iter([("宗门暗战", True), ("宗门 暗战", True)])
    monkeypatch.setattr(QInputDialog, "getText", staticmethod(lambda *a, **k: next(answers)))
    before = window.project.document("storylines/storylines.json")
    run(qloop, window, window.story.add_storyline_action.trigger)
    assert not window.pipeline.running
    [(title, text)] = messages.shown
    assert title == "添加故事线" and "不能用" in text
    assert window.project.document("storylines/storylines.json") == before


def test_add_a_storyline(
    qloop: qasync.QEventLoop, window: MainWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    answers = iter([("宗门暗战", True), ("sect_war", True)])
    monkeypatch.setattr(QInputDialog, "getText", staticmethod(lambda *a, **k: next(answers)))
    monkeypatch.setattr(
        QInputDialog, "getMultiLineText", staticmethod(lambda *a, **k: ("外门与内门争夺药田", True))
    )
    report = run(qloop, window, window.story.add_storyline_action.trigger)
    assert "宗门暗战" in report
    lines = window.project.document_json("storylines/storylines.json")["storylines"]
    assert any(s["id"] == "sect_war" and s["description"] == "外门与内门争夺药田" for s in lines)


def test_import_research_notes(
    qloop: qasync.QEventLoop, window: MainWindow, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    note = tmp_path / "宋代药铺.txt"
    note.write_text("宋代药铺的规矩：学徒三年不得碰秤。", encoding="gb18030")
    monkeypatch.setattr(QFileDialog, "getOpenFileNames", staticmethod(lambda *a, **k: ([str(note)], "")))
    before = set(window.project.documents("research/"))
    run(qloop, window, window.story.import_research_action.trigger)
    [path] = set(window.project.documents("research/")) - before
    assert "宋代药铺" in path
    assert "学徒三年不得碰秤" in (window.project.document(path) or "")


def test_rejudge_the_open_chapter_keeps_the_old_verdict_in_the_log(
    qloop: qasync.QEventLoop, window: MainWindow, fake: FakeAnthropicServer
) -> None:
    fake.set_default("quality_judge", judge_json(4.4))
    window.open_chapter(2)
    report = run(qloop, window, window.story.rejudge_action.trigger)
    assert "第2章 重新评审" in report and "4.4 分" in report
    assert window.project.evaluation(2)["overall"] == pytest.approx(4.4)


def test_rejudge_without_an_open_chapter_says_what_to_do(
    qloop: qasync.QEventLoop, window: MainWindow, monkeypatch: pytest.MonkeyPatch, alerts: RecordingAlerts
) -> None:
    messages = Messages(alerts)
    window.open_view("outline")
    run(qloop, window, window.story.rejudge_action.trigger)
    assert messages.shown == [("重新评审", "先打开一个已写好的章节。")]


def test_batch_reevaluation_of_a_range(
    qloop: qasync.QEventLoop, window: MainWindow, fake: FakeAnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake.set_default(BATCH_ROLE, judge_json(3.8))
    fake.set_default("quality_judge", judge_json(3.8))
    monkeypatch.setattr(QInputDialog, "getText", staticmethod(lambda *a, **k: ("1-2", True)))
    import novel_desktop.llm.batches as batches

    real = batches.run_batch

    async def fast(*args: object, **kwargs: object) -> batches.BatchReport:
        kwargs["first_poll_s"] = 0.01  # the fake server's batch is done at once
        return await real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr("novel_desktop.agents.judge.run_batch", fast)
    report = run(qloop, window, window.story.reevaluate_action.trigger)
    assert "50%" in report and "第1章 重新评审" in report and "第2章 重新评审" in report
    assert window.project.evaluation(1)["overall"] == pytest.approx(3.8)


def test_a_range_naming_no_written_chapter_is_refused(
    qloop: qasync.QEventLoop, window: MainWindow, monkeypatch: pytest.MonkeyPatch, alerts: RecordingAlerts
) -> None:
    messages = Messages(alerts)
    monkeypatch.setattr(QInputDialog, "getText", staticmethod(lambda *a, **k: ("第九章", True)))
    run(qloop, window, window.story.reevaluate_action.trigger)
    assert not window.pipeline.running
    [(title, text)] = messages.shown
    assert title == "批量重新评审" and "1-2" in text


def test_parse_chapter_range() -> None:
    assert parse_chapter_range("1-3, 7", 10) == [1, 2, 3, 7]
    assert parse_chapter_range("8～5", 10) == [5, 6, 7, 8]
    assert parse_chapter_range("9-20", 10) == [9, 10]
    assert parse_chapter_range("abc", 10) is None
    assert parse_chapter_range("", 10) is None


def test_extend_the_world_a_hard_rule_conflict_is_asked_in_a_dialog(
    qloop: qasync.QEventLoop, window: MainWindow, fake: FakeAnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """WorldBuilder's requires_user_decision becomes a modal AskDialog; the author's choice is sent back."""
    decision, new_rule = WORLD_CONFLICT, SPRING_RULE
    fake.script("world_builder", json.dumps(decision, ensure_ascii=False), _world_reply(new_rule))
    monkeypatch.setattr(
        QInputDialog, "getMultiLineText", staticmethod(lambda *a, **k: ("青石镇地下有灵脉", True))
    )
    asked: list[str] = []

    def answer() -> None:
        if accept_review(window):
            return
        dialog = next(d for d in window.findChildren(AskDialog) if d.isVisible())
        asked.append(dialog.spec.questions[0].question)
        dialog.option_button("decision", "保留 W-002，改在镇外设灵脉").click()
        dialog.ok_button.click()

    window.pipeline.question_asked.connect(lambda _r: QTimer.singleShot(50, answer))
    report = run(qloop, window, window.story.extend_world_action.trigger)
    assert len(asked) == 1 and "W-002" in asked[0]
    assert "作者的决定：保留 W-002" in fake.requests_for("world_builder")[1].body["messages"][0]["content"]
    assert any(r["id"] == "W-004" for r in window.project.document_json("world/rules.json")["rules"])
    assert "W-004" in report


def test_a_new_world_rule_lists_the_contracts_it_touches_and_offers_to_update_them(
    qloop: qasync.QEventLoop, window: MainWindow, fake: FakeAnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """§6.5.5: a rule about 引气入体 touches 林枫's capability contract; the author is asked, says 暂不更新,
    and no contract changes (CharacterWeaver is not called)."""
    new_rule = {
        "id": "W-004",
        "category": "magic_system",
        "rule": "凡人引气入体之后方能施展法术",
        "constraint_type": "soft",
    }
    fake.set_default("world_builder", _world_reply(new_rule))
    monkeypatch.setattr(
        QInputDialog, "getMultiLineText", staticmethod(lambda *a, **k: ("补一条修炼规则", True))
    )
    before = window.project.document("characters/active/lin-feng.json")
    asked: list[str] = []

    def answer() -> None:
        reviewed = accept_review(window)
        if reviewed:
            asked.append(reviewed)
            return
        dialog = next(d for d in window.findChildren(AskDialog) if d.isVisible())
        asked.append(dialog.spec.topic)
        dialog.option_button("propagate", "暂不更新").click()
        dialog.ok_button.click()

    window.pipeline.question_asked.connect(lambda _r: QTimer.singleShot(50, answer))
    report = run(qloop, window, window.story.extend_world_action.trigger)
    assert asked == ["world review", "rule change propagation"]
    assert "规则 W-004 变更影响" in report and "C-LINFENG-001" in report and "暂不更新" in report
    assert window.project.document("characters/active/lin-feng.json") == before
    assert fake.requests_for("character_weaver") == []
