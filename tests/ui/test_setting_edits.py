"""Later edits from the window (issue 14, item 3): the forms prefilled from the novel, 自第 N 章起生效, stored
through the approval core with a changelog line; a read-only novel is refused with nothing changed."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import qasync
from pytestqt.qtbot import QtBot

from novel_desktop.config import AppSettings
from novel_desktop.controllers.jobs import Job
from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.ui.character_form import CharacterForm
from novel_desktop.ui.flows.setting_edits import SettingEditDialog
from novel_desktop.ui.main_window import MainWindow
from novel_desktop.ui.project_tree import CHARACTER
from novel_desktop.ui.proposal_forms import VolumePlanForm
from tests.fakes.alerts import RecordingAlerts

pytestmark = pytest.mark.usefixtures("gui_thread_gc")


@pytest.fixture
def window(qtbot: QtBot, project: ProjectController) -> MainWindow:
    win = MainWindow(project=project, settings=AppSettings())
    qtbot.addWidget(win)
    win._update_for_project()
    win.show_workspace()
    win.show()
    return win


def _saved(qloop: qasync.QEventLoop, window: MainWindow, dialog: SettingEditDialog) -> Job:
    """Press 保存 and wait for the save job to end."""
    jobs: list[Job] = []
    window.jobs.job_started.connect(jobs.append)
    dialog.save_button.click()
    assert jobs, dialog.error_label.text()
    qloop.run_until_complete(asyncio.wait_for(jobs[0].wait(), 30))
    return jobs[0]


def test_a_character_contract_edited_from_the_tree_is_stored_and_the_changelog_names_the_chapter(
    qloop: qasync.QEventLoop, window: MainWindow, alerts: RecordingAlerts
) -> None:
    tree = window.tree
    section = tree.model.section(CHARACTER)
    assert section is not None
    lin = next(n for n in section.children if n.label == "林枫")
    index = tree.model.createIndex(lin.row(), 0, lin)
    assert tree.edit_target(index) == ("characters", "lin-feng")
    tree.edit_requested.emit(*tree.edit_target(index))  # what 修改… in the item's context menu sends
    dialog = window.setting_edits.dialog
    assert dialog is not None and dialog.isVisible()
    form = dialog.form
    assert isinstance(form, CharacterForm)
    # The form opens on the character the author right-clicked, prefilled from the novel.
    assert form.line_edits["name"].text() == "林枫"
    # By default the edit takes effect from the next chapter to write (chapters 1-2 are written).
    assert dialog.from_spin.value() == 3
    row = form.contracts.find_row("id", "C-LINFENG-001")
    form.contracts.set_text(row, "rule", "已引气入体，只会最粗浅的引气术")
    dialog.from_spin.setValue(4)
    dialog.note_edit.setText("第 4 章突破")

    job = _saved(qloop, window, dialog)
    assert job.error is None
    assert window.setting_edits.dialog is None  # closed (and deleted) once stored
    card = window.project.document_json("characters/active/lin-feng.json")
    contract = next(c for c in card["contracts"] if c["id"] == "C-LINFENG-001")
    assert contract["rule"] == "已引气入体，只会最粗浅的引气术"
    log = window.project.document("characters/changelog.md") or ""
    last = log.strip().splitlines()[-1]
    assert "自第 4 章起生效" in last and "第 4 章突破" in last
    assert "自第 4 章起生效" in window.statusBar().currentMessage()
    assert alerts.shown == []


def test_an_invalid_edit_is_explained_in_the_dialog_and_nothing_is_stored(
    window: MainWindow, alerts: RecordingAlerts
) -> None:
    before = window.project.document("world/rules.json")
    window.setting_edits.actions["world"].trigger()
    dialog = window.setting_edits.dialog
    assert dialog is not None
    rules = dialog.form.rules  # type: ignore[attr-defined]
    rules.set_text(0, "rule", "")
    jobs: list[Job] = []
    window.jobs.job_started.connect(jobs.append)
    dialog.save_button.click()
    assert jobs == [] and dialog.isVisible()
    assert "「规则」不能为空" in dialog.error_label.text()
    assert window.project.document("world/rules.json") == before
    dialog.reject()


def test_saving_an_unchanged_form_says_so_and_writes_nothing(window: MainWindow) -> None:
    window.setting_edits.actions["storylines"].trigger()
    dialog = window.setting_edits.dialog
    assert dialog is not None
    jobs: list[Job] = []
    window.jobs.job_started.connect(jobs.append)
    dialog.save_button.click()
    assert jobs == [] and "没有改动" in dialog.error_label.text()
    dialog.reject()


def test_the_outline_view_opens_the_volume_plan_form_on_its_selected_chapter(
    qloop: qasync.QEventLoop, window: MainWindow
) -> None:
    view = window.open_view("outline")
    assert view is not None
    view.select_chapter(2)  # type: ignore[attr-defined]
    view.plan_edit_button.click()  # type: ignore[attr-defined]
    dialog = window.setting_edits.dialog
    assert dialog is not None
    form = dialog.form
    assert isinstance(form, VolumePlanForm)
    assert form.contract_form.chapter == 2
    form.contract_form.world_rules_edit.setText("W-001, W-003")
    assert _saved(qloop, window, dialog).error is None
    contract = window.project.document_json("volumes/vol-01/chapter-contracts/chapter-002.json")
    assert contract["preconditions"]["required_world_rules"] == ["W-001", "W-003"]
    assert "自第 3 章起生效" in (window.project.document("volumes/vol-01/changelog.md") or "")


def test_a_read_only_novel_is_refused_with_a_clear_message_and_nothing_opens(
    qtbot: QtBot, seed_novel: Path, alerts: RecordingAlerts, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As if the file were read-only (root writes anything, so chmod would not stop it).
    monkeypatch.setattr("novel_desktop.storage.store.can_write", lambda _p: False)
    monkeypatch.setattr("novel_desktop.storage.engine.can_write", lambda _p: False)
    before = seed_novel.read_bytes()
    project = ProjectController()
    project.open(seed_novel)
    assert project.readonly
    win = MainWindow(project=project, settings=AppSettings())
    qtbot.addWidget(win)
    win._update_for_project()
    assert not win.setting_edits.actions["characters"].isEnabled()
    assert win.setting_edits.edit("characters") is None
    assert win.setting_edits.dialog is None
    (_kind, title, text) = alerts.shown[-1]
    assert title == "修改角色与契约" and "只读" in text and "什么都没有改动" in text
    project.close()
    assert seed_novel.read_bytes() == before


def test_a_save_the_store_refuses_is_told_and_the_dialog_keeps_what_was_typed(
    qloop: qasync.QEventLoop, window: MainWindow, alerts: RecordingAlerts, monkeypatch: pytest.MonkeyPatch
) -> None:
    from novel_desktop.storage.errors import NovelBusyError
    from novel_desktop.storage.store import NovelStore

    def busy(*_a: object, **_k: object) -> None:
        raise NovelBusyError("另一个程序正在写这部小说，稍后再试")

    monkeypatch.setattr(NovelStore, "put_documents", busy)
    before = window.project.document("world/rules.json")
    window.setting_edits.actions["world"].trigger()
    dialog = window.setting_edits.dialog
    assert dialog is not None
    rules = dialog.form.rules  # type: ignore[attr-defined]
    rules.set_text(0, "rule", "凡人须引气入体")
    job = _saved(qloop, window, dialog)
    assert job.error is not None
    assert dialog.isVisible() and rules.text(0, "rule") == "凡人须引气入体"
    assert "另一个程序正在写这部小说" in dialog.error_label.text()
    (_kind, title, text) = alerts.shown[-1]
    assert title == "修改世界规则" and "小说未改动" in text
    assert window.project.document("world/rules.json") == before
    dialog.reject()


def test_a_world_proposal_reviewed_through_the_window_stores_exactly_what_the_author_kept(
    qloop: qasync.QEventLoop, window: MainWindow
) -> None:
    """The core's review question with a proposal, answered by the real window (its pipeline controller's
    responder opens the ProposalDialog); the author edits one rule and deletes another."""
    from novel_desktop.domain.proposals import Proposal
    from novel_desktop.pipeline import approval
    from novel_desktop.pipeline.interaction import InteractionManager
    from novel_desktop.ui.proposal_dialog import ProposalDialog

    store = window.project.store
    proposal = Proposal(
        kind="world",
        title="扩展世界观：灵泉",
        payload=approval.current_payload(store, "world"),
        effective_from=3,
        note="世界观构建师按你的要求补充了设定。",
    )
    interaction = InteractionManager(window.pipeline._respond)

    async def flow() -> approval.ReviewDecision:
        task = asyncio.ensure_future(
            approval.review(store, interaction, proposal, "staging/novel-ask/world-review.answers.json")
        )
        while not (shown := [d for d in window.findChildren(ProposalDialog) if d.isVisible()]):
            await asyncio.sleep(0.01)
        dialog = shown[0]
        assert dialog.isModal() and dialog.windowTitle() == "扩展世界观：灵泉"
        rules = dialog.form.rules  # type: ignore[attr-defined]
        rules.set_text(rules.find_row("id", "W-003"), "rule", "苍梧宗每五年开山收徒一次")
        rules.table.selectRow(rules.find_row("id", "W-002"))
        rules.remove_button.click()
        dialog.save_button.click()
        return await asyncio.wait_for(task, 10)

    decision = qloop.run_until_complete(flow())
    assert decision.action == "edit" and decision.payload is not None
    approval.apply_payload(store, "world", decision.payload, effective_from=3, note="扩展世界观")
    stored = {r["id"]: r["rule"] for r in window.project.document_json("world/rules.json")["rules"]}
    assert stored == {
        "W-001": "凡人须引气入体方可修炼，引气之地灵气浓度须 ≥ 1级",
        "W-003": "苍梧宗每五年开山收徒一次",
    }
    assert "自第 3 章起生效" in (window.project.document("world/changelog.md") or "")
