"""AskDialog: a NOVEL_ASK QuestionSpec shown as a form; what it returns is a valid AnswerSpec."""

from __future__ import annotations

import asyncio
from typing import Any

import qasync
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QInputMethodEvent
from PySide6.QtWidgets import QAbstractButton, QApplication, QCheckBox, QDialog, QLabel, QRadioButton, QWidget
from pytestqt.qtbot import QtBot

from novel_desktop.domain.novel_ask import QuestionSpec
from novel_desktop.domain.novel_ask_answers import validate_answer_spec
from novel_desktop.ui.ask_dialog import AskDialog


def _spec(*questions: dict[str, Any]) -> QuestionSpec:
    return QuestionSpec.model_validate(
        {"version": 1, "topic": "chapter 3 gate", "questions": list(questions)}
    )


LOW_SCORE = {
    "id": "low_score_action",
    "header": "第3章低分",
    "question": "第 3 章评分偏低，怎么处理？",
    "kind": "single_choice",
    "options": [
        {"label": "手动改", "description": "章节留在暂存区"},
        {"label": "自动修订", "description": "推荐：按评审意见修订"},
        {"label": "接受", "description": "按现状提交并标记"},
    ],
    "default": "自动修订",
}
TAGS = {
    "id": "tags",
    "header": "标签",
    "question": "本章有哪些元素？",
    "kind": "multi_choice",
    "required": True,
    "allow_other": True,
    "options": [{"label": "打斗"}, {"label": "伏笔"}, {"label": "感情线 (Recommended)"}],
}
NOTE = {"id": "note", "header": "备注", "question": "给修订者的话", "kind": "free_text", "required": False}


def _dialog(qtbot: QtBot, spec: QuestionSpec, context: str = "") -> AskDialog:
    dialog = AskDialog(spec, context)
    qtbot.addWidget(dialog)
    return dialog


def _click(qtbot: QtBot, button: QAbstractButton) -> None:
    # A check box or radio button reacts on its indicator and text, not on the empty space to the right.
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton, pos=QPoint(8, button.height() // 2))


def _type(widget: QWidget, text: str) -> None:
    # Chinese arrives through the input method as a commit string (QTest.keyClicks cannot type CJK).
    event = QInputMethodEvent()
    event.setCommitString(text)
    QApplication.sendEvent(widget, event)


def _visible_order(dialog: AskDialog, qid: str) -> list[str]:
    box = dialog.boxes[qid]
    found = [*box.findChildren(QRadioButton), *box.findChildren(QCheckBox)]
    found.sort(key=lambda b: b.geometry().top())
    return [b.text() for b in found]


def test_single_choice_is_radio_buttons_with_the_default_and_the_recommended_option_first(
    qtbot: QtBot,
) -> None:
    dialog = _dialog(qtbot, _spec(LOW_SCORE), context="主要问题：守门弟子脸谱化")
    dialog.show()
    qtbot.waitExposed(dialog)
    assert dialog.windowTitle() == "第3章低分"
    assert dialog.boxes["low_score_action"].title() == "第3章低分"
    assert dialog.context_view is not None and "脸谱化" in dialog.context_view.toPlainText()
    assert isinstance(dialog.option_button("low_score_action", "接受"), QRadioButton)
    assert _visible_order(dialog, "low_score_action") == ["自动修订（推荐）", "手动改", "接受"]
    assert dialog.option_button("low_score_action", "自动修订").isChecked()
    assert dialog.other_button("low_score_action") is None  # allow_other not set
    assert dialog.ok_button.isEnabled()

    _click(qtbot, dialog.option_button("low_score_action", "接受"))
    assert not dialog.option_button("low_score_action", "自动修订").isChecked()
    qtbot.mouseClick(dialog.ok_button, Qt.MouseButton.LeftButton)
    answer = dialog.answer()
    assert answer is not None
    assert answer.answers == {"low_score_action": "接受"}
    assert answer.answered_by == "novel_desktop"
    assert validate_answer_spec(dialog.spec, answer.to_json_dict()) == []


def test_required_multi_choice_blocks_submit_until_something_is_picked_and_other_needs_text(
    qtbot: QtBot,
) -> None:
    dialog = _dialog(qtbot, _spec(TAGS, NOTE))
    assert isinstance(dialog.option_button("tags", "打斗"), QCheckBox)
    assert _visible_order(dialog, "tags")[0] == "感情线 (Recommended)"
    assert not dialog.ok_button.isEnabled()  # nothing chosen for a required question

    other = dialog.other_button("tags")
    edit = dialog.other_edit("tags")
    assert other is not None and edit is not None
    _click(qtbot, other)
    assert not dialog.ok_button.isEnabled()  # "其他" ticked but empty
    _type(edit, "金手指")
    assert dialog.ok_button.isEnabled()
    _click(qtbot, dialog.option_button("tags", "伏笔"))
    qtbot.mouseClick(dialog.ok_button, Qt.MouseButton.LeftButton)

    answer = dialog.answer()
    assert answer is not None
    # The optional free text left blank is omitted, as the seed requires.
    assert answer.answers == {"tags": ["伏笔", "金手指"]}
    assert validate_answer_spec(dialog.spec, answer.to_json_dict()) == []


def test_typing_an_other_answer_selects_other(qtbot: QtBot) -> None:
    dialog = _dialog(qtbot, _spec({**LOW_SCORE, "allow_other": True, "default": None}))
    assert not dialog.ok_button.isEnabled()
    edit = dialog.other_edit("low_score_action")
    assert edit is not None
    _type(edit, "先放一放")
    other = dialog.other_button("low_score_action")
    assert other is not None and other.isChecked()
    assert dialog.ok_button.isEnabled()
    qtbot.mouseClick(dialog.ok_button, Qt.MouseButton.LeftButton)
    answer = dialog.answer()
    assert answer is not None and answer.answers == {"low_score_action": "先放一放"}


def test_a_default_outside_the_options_prefills_other(qtbot: QtBot) -> None:
    dialog = _dialog(qtbot, _spec({**LOW_SCORE, "allow_other": True, "default": "明天再说"}))
    edit = dialog.other_edit("low_score_action")
    assert edit is not None and edit.text() == "明天再说"
    assert dialog.ok_button.isEnabled()


def test_required_free_text_is_a_text_box_that_must_not_be_blank(qtbot: QtBot) -> None:
    dialog = _dialog(qtbot, _spec({**NOTE, "required": True, "default": "  "}))
    edit = dialog.text_edit("note")
    assert edit is not None and edit.toPlainText() == "  "
    assert not dialog.ok_button.isEnabled()
    _type(edit, "对话再短一点")
    assert dialog.ok_button.isEnabled()
    qtbot.mouseClick(dialog.ok_button, Qt.MouseButton.LeftButton)
    answer = dialog.answer()
    assert answer is not None and answer.answers["note"].strip() == "对话再短一点"


def test_ask_returns_the_answer_or_none_on_cancel(qtbot: QtBot, qloop: qasync.QEventLoop) -> None:
    spec = _spec(LOW_SCORE)
    window = QWidget()  # as over the main window (a last window closing would quit the loop)
    qtbot.addWidget(window)
    window.show()

    async def answer_with(button_name: str) -> Any:
        asked = asyncio.ensure_future(AskDialog.ask_async(window, spec))
        while not (shown := [w for w in qtbot_app_widgets() if isinstance(w, AskDialog) and w.isVisible()]):
            await asyncio.sleep(0.01)
        qtbot.mouseClick(getattr(shown[0], button_name), Qt.MouseButton.LeftButton)
        return await asked

    answer = qloop.run_until_complete(asyncio.wait_for(answer_with("ok_button"), 10))
    assert answer is not None and answer.answers == {"low_score_action": "自动修订"}
    assert qloop.run_until_complete(asyncio.wait_for(answer_with("cancel_button"), 10)) is None


def qtbot_app_widgets() -> list[Any]:
    return list(QApplication.topLevelWidgets())


def test_ask_async_from_a_coroutine_and_cancelling_the_task_closes_the_dialog(
    qtbot: QtBot, qloop: qasync.QEventLoop
) -> None:
    spec = _spec(LOW_SCORE)
    # The author's window stays open behind the dialog (were the dialog the last window, closing it would
    # quit the application's event loop).
    window = QWidget()
    qtbot.addWidget(window)
    window.show()

    async def flow() -> None:
        task = asyncio.ensure_future(AskDialog.ask_async(window, spec))
        await asyncio.sleep(0.05)
        dialog = next(w for w in window.findChildren(AskDialog) if w.isVisible())
        assert dialog.isModal()
        # click(), not qtbot.mouseClick: QTest would spin a nested event loop inside this task.
        dialog.option_button("low_score_action", "手动改").click()
        dialog.ok_button.click()
        answer = await task
        assert answer is not None and answer.answers == {"low_score_action": "手动改"}

        task = asyncio.ensure_future(AskDialog.ask_async(window, spec))
        await asyncio.sleep(0.05)
        dialog = next(w for w in window.findChildren(AskDialog) if w.isVisible())
        codes: list[int] = []
        dialog.finished.connect(codes.append)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        assert task.cancelled()
        assert codes == [QDialog.DialogCode.Rejected.value]
        await asyncio.sleep(0)
        assert not any(w.isVisible() for w in window.findChildren(AskDialog))

    qloop.run_until_complete(flow())


def test_many_questions_scroll(qtbot: QtBot) -> None:
    questions = [{**LOW_SCORE, "id": f"q_{i}", "header": f"问题{i}"} for i in range(12)]
    dialog = _dialog(qtbot, _spec(*questions))
    dialog.show()
    qtbot.waitExposed(dialog)
    assert dialog.windowTitle() == "需要你的决定"
    assert dialog.scroll_area.verticalScrollBar().maximum() > 0
    assert dialog.height() < dialog.scroll_area.widget().sizeHint().height()


def test_a_long_context_scrolls_and_the_questions_and_buttons_stay_in_view(qtbot: QtBot) -> None:
    """A 30-chapter outline as the context of the plan question: the dialog stays within the screen, the
    outline scrolls in its own box, and 确定 is visible."""
    outline = "\n".join(f"## 第 {n} 章 问心{n}\n- POV: 林枫\n- Conflict: 守门弟子拒收" for n in range(4, 34))
    dialog = AskDialog(_spec(LOW_SCORE), outline)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    screen = dialog.screen().availableGeometry()
    assert dialog.height() <= screen.height()
    view = dialog.context_view
    assert view is not None and "第 33 章 问心33" in view.toPlainText()
    assert view.height() <= screen.height() / 3 + 1
    assert view.verticalScrollBar().maximum() > 0  # the rest is a scroll away
    assert dialog.ok_button.isVisible() and dialog.ok_button.isEnabled()


def test_a_files_question_gets_a_browse_button_that_fills_the_paths(qtbot: QtBot, monkeypatch: Any) -> None:
    from PySide6.QtWidgets import QFileDialog

    spec = _spec({"id": "sample_files", "header": "样本", "question": "样本文件路径", "kind": "free_text"})
    dialog = AskDialog(spec)
    qtbot.addWidget(dialog)
    monkeypatch.setattr(
        QFileDialog, "getOpenFileNames", staticmethod(lambda *a, **k: (["/tmp/一.txt", "/tmp/二.txt"], ""))
    )
    box = dialog.boxes["sample_files"]
    assert box.browse_button is not None
    box.browse_button.click()
    assert dialog.text_edit("sample_files").toPlainText() == "/tmp/一.txt, /tmp/二.txt"
    # Other free-text questions have no such button.
    other = AskDialog(
        _spec({"id": "direction", "header": "方向", "question": "往哪里走", "kind": "free_text"})
    )
    qtbot.addWidget(other)
    assert other.boxes["direction"].browse_button is None


def test_several_questions_are_titled_by_what_they_are_about(qtbot: QtBot) -> None:
    from novel_desktop.pipeline.quick_start import setup_spec

    dialog = AskDialog(setup_spec())
    qtbot.addWidget(dialog)
    assert dialog.windowTitle() == "新书设定"
    assert dialog.findChild(QLabel).text() == "新书设定（4 个问题）"
