"""重建报告 (issue 15): a finished rebuild shows per chapter what changed in the story state and the later chapters
that contradict it; 重新评审这些章节 sends them as one batch."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from novel_desktop.config import AppSettings
from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.ui.main_window import MainWindow
from novel_desktop.ui.rebuild_report import RebuildReportDialog
from tests.ui.shots import save_shot

pytestmark = pytest.mark.usefixtures("gui_thread_gc")

REPORT = {
    "chapter": 3,
    "requested": 3,
    "resummarized": [3],
    "changes": {
        3: ["物品 青铜钥匙：持有者 林风 → 已不存在"],
        4: [],
        5: ["人物 林风：随身物品 青铜钥匙 → 无"],
    },
    "disagreeing": {5: ["物品 青铜钥匙 在新状态中已不存在，第5章摘要仍写到它"]},
    "dropped_ops": [],
    "notes": [],
    "cost_usd": 0.0123,
}


def _texts(tree: object) -> list[str]:
    out = []
    for i in range(tree.topLevelItemCount()):  # type: ignore[attr-defined]
        top = tree.topLevelItem(i)  # type: ignore[attr-defined]
        out.append(f"{top.text(0)} {top.text(1)}")
        out += [f"  {top.child(j).text(1)}" for j in range(top.childCount())]
    return out


def test_the_dialog_lists_the_changes_and_the_cascade(qtbot: QtBot) -> None:
    dialog = RebuildReportDialog(REPORT)
    qtbot.addWidget(dialog)
    assert "已从第3章重建" in dialog.summary_label.text()
    assert _texts(dialog.changes_tree) == [
        "第3章 1 处变化",
        "  物品 青铜钥匙：持有者 林风 → 已不存在",
        "第4章 无变化",
        "第5章 1 处变化",
        "  人物 林风：随身物品 青铜钥匙 → 无",
    ]
    assert _texts(dialog.cascade_tree) == [
        "第5章 1 处矛盾",
        "  物品 青铜钥匙 在新状态中已不存在，第5章摘要仍写到它",
    ]
    with qtbot.waitSignal(dialog.rejudge_requested) as sent:
        dialog.rejudge_button.click()
    assert sent.args == [[5]]
    save_shot(dialog, "rebuild_report")


def test_a_rebuild_with_nothing_to_check_offers_no_rejudge(qtbot: QtBot) -> None:
    dialog = RebuildReportDialog({**REPORT, "disagreeing": {}})
    qtbot.addWidget(dialog)
    assert not dialog.rejudge_button.isVisibleTo(dialog)
    assert dialog.cascade_label.text() == "后续章节与新状态一致。"


def test_the_window_shows_the_report_and_rejudges_in_one_batch(
    qtbot: QtBot, project: ProjectController, monkeypatch: pytest.MonkeyPatch
) -> None:
    win = MainWindow(project=project, settings=AppSettings())
    qtbot.addWidget(win)
    win._update_for_project()
    win.show_workspace()
    win.show()
    sent: list[tuple[str, dict[str, object]]] = []
    monkeypatch.setattr(win.pipeline, "run_action", lambda name, **params: sent.append((name, params)))
    win.pipeline.rebuild_finished.emit(REPORT)
    dialog = win.findChild(RebuildReportDialog)
    assert dialog is not None and dialog.isVisible()
    assert "第5章" in _texts(dialog.cascade_tree)[0]
    dialog.rejudge_button.click()
    assert sent == [("reevaluate", {"chapters": [5]})]
    assert not dialog.isVisible()


def test_the_english_catalogue_covers_the_report() -> None:
    from novel_desktop.paths import resource
    from novel_desktop.ui import rebuild_report

    catalogue = json.loads(resource("i18n", "en", "rebuild.json").read_text(encoding="utf-8"))
    source = Path(rebuild_report.__file__).read_text(encoding="utf-8")
    literals = {m.group(1) for m in re.finditer(r'tr\(\s*"([^"]*)"', source)}
    assert sorted(literals - set(catalogue)) == []
