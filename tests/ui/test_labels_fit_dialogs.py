"""English labels fit in the dialogs and panels test_labels_fit.py does not open: the gate's low-score
question with its quality report, the import preview, the proposal forms, the context inspector, the
revision history and the 续写 queue rows, at the UI font's size and at 1.5× it (as test_labels_fit.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
import qasync
from PySide6.QtWidgets import QApplication, QDialog, QWidget
from pytestqt.qtbot import QtBot

from novel_desktop.controllers.project_controller import ProjectController
from tests.ui.test_labels_fit import _check, _window, demo, scale

__all__ = ["demo", "scale"]  # the fixtures, imported for this module's tests

pytestmark = pytest.mark.usefixtures("gui_thread_gc")


def _shown(qtbot: QtBot, dialog: QDialog, size: tuple[int, int] | None = None) -> QDialog:
    qtbot.addWidget(dialog)
    if size is not None:
        dialog.resize(*size)
    dialog.show()
    return dialog


def test_the_gate_report_dialog_fits(
    qtbot: QtBot, qapp: QApplication, demo: ProjectController, scale: float
) -> None:
    from novel_desktop.domain.novel_ask import QuestionSpec
    from novel_desktop.ui.ask_dialog import AskDialog
    from novel_desktop.ui.gate_report import staged_report
    from tests.ui.test_ask_dialog import LOW_SCORE, NOTE

    spec = QuestionSpec.model_validate(
        {"version": 1, "topic": "chapter 1 low score", "questions": [LOW_SCORE, NOTE]}
    )
    report = staged_report(demo, 1)
    assert report is not None
    # As wide as the dialog makes itself on a 1366-pixel screen (the offscreen one is 800 wide).
    dialog = _shown(qtbot, AskDialog(spec, "", report=report), (1200, 760))
    assert _check(qapp, dialog, "gate-report", scale) == []


def test_the_import_preview_fits(qtbot: QtBot, qapp: QApplication, scale: float) -> None:
    from tests.ui.test_import_preview import HEADINGS, dialog_for

    dialog = dialog_for(qtbot, HEADINGS / "traditional.big5.txt")  # every kind of place to check
    assert dialog.unjoin_button.isVisible()
    assert _check(qapp, dialog, "import-preview", scale) == []


@pytest.mark.parametrize("kind", ["world", "characters", "volume_plan"])
def test_the_proposal_dialog_fits(qtbot: QtBot, qapp: QApplication, scale: float, kind: str) -> None:
    from novel_desktop.domain.proposals import Proposal
    from novel_desktop.ui.proposal_dialog import ProposalDialog
    from tests.ui.test_proposal_dialog import characters_payload, plan_payload, world_payload

    payload = {"world": world_payload, "characters": characters_payload, "volume_plan": plan_payload}[kind]()
    proposal = Proposal(kind=kind, title="快速起步", payload=payload, note="按你的题材和主角生成。")  # type: ignore[arg-type]
    dialog = _shown(qtbot, ProposalDialog(proposal))
    assert _check(qapp, dialog, f"proposal-{kind}", scale) == []


def test_the_context_inspector_fits(
    qtbot: QtBot, qapp: QApplication, demo: ProjectController, scale: float
) -> None:
    from novel_desktop.controllers.context_controller import ContextController
    from novel_desktop.ui.context_dialog import ContextDialog

    dialog = _shown(qtbot, ContextDialog(ContextController(demo), 2))
    assert _check(qapp, dialog, "context", scale) == []


def test_the_revision_history_fits(
    qtbot: QtBot, qapp: QApplication, demo: ProjectController, scale: float
) -> None:
    from novel_desktop.ui.revision_dialog import RevisionDialog

    demo.save_chapter(1, demo.chapter_text(1) + "\n\n　　又一段。")  # two revisions to compare
    dialog = RevisionDialog(demo, 1)
    _shown(qtbot, dialog)
    assert _check(qapp, dialog, "revisions", scale) == []


def test_the_queue_rows_fit(qtbot: QtBot, qapp: QApplication, demo: ProjectController, scale: float) -> None:
    from novel_desktop.ui.queue_panel import COMMITTED, QUEUED, WAITING, WRITING

    win = _window(qtbot, demo)
    win._update_for_project()
    win.show_workspace()
    queue = win.pipeline_dock.queue
    first = len(demo.chapters()) + 1
    queue.start_queue(first, 4)
    for offset, (state, step) in enumerate([(COMMITTED, 4), (WRITING, 0), (QUEUED, None), (WAITING, 3)]):
        queue.rows[first + offset].set_state(state, step)
    queue.show()
    root: QWidget = win.pipeline_dock
    assert _check(qapp, root, "queue", scale) == []


def test_the_adoption_dialog_shows_every_line(
    qtbot: QtBot, qloop: qasync.QEventLoop, qapp: QApplication, tmp_path: Path, scale: float
) -> None:
    # Its intro and its estimate wrap; the dialog grows to their height (in English it kept its first one).
    from tests.pipeline.adopt_book import imported_book
    from tests.ui.test_adopt_window import _open_from_start_page
    from tests.ui.test_adopt_window import _window as adopt_window

    window = adopt_window(qtbot, imported_book(tmp_path))
    dialog = _open_from_start_page(qloop, window)
    assert _check(qapp, dialog, "adopt", scale) == []
