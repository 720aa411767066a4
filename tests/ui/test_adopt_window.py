"""接续已有书稿 in the real window against the fake Messages API (issue 19 point 1): the start page recommends
it for an imported book, the dialog shows the estimate before any request, 开始分析 reads the six chapters with
progress, the approvals come as the usual proposal and ask dialogs (answered by clicking, one of them edited),
the novel then holds the book's characters, rules, storylines, state and style, and the start page recommends
planning. A failing reply after chapter 3 keeps three chapters; reopened, the estimate says so and only
chapters 4-6 are read."""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest
import qasync
from PySide6.QtCore import QTimer
from pytestqt.qtbot import QtBot

from novel_desktop.config import AppSettings
from novel_desktop.controllers.adopt_controller import AdoptSummary
from novel_desktop.storage.store import NovelStore
from novel_desktop.ui.adopt_dialog import AdoptDialog
from novel_desktop.ui.main_window import MainWindow
from novel_desktop.ui.proposal_dialog import ProposalDialog
from novel_desktop.ui.world_form import WorldForm
from tests.fakes.alerts import RecordingAlerts
from tests.fakes.anthropic_server import FakeAnthropicServer, Reply
from tests.pipeline.adopt_book import imported_book, note_json, script_adoption
from tests.ui.test_lifecycle_window import DialogAnswerer

pytestmark = pytest.mark.usefixtures("gui_thread_gc")

#: Where the screenshots go when NOVEL_SHOTS is set (for a person to look at them).
SHOTS = os.environ.get("NOVEL_SHOTS")


def _shot(widget: AdoptDialog, name: str) -> None:
    if SHOTS:
        widget.grab().save(str(Path(SHOTS) / f"adopt-{name}.png"))


def _chapters_read(fake: FakeAnthropicServer) -> list[int]:
    found = (re.search(r"# 第 (\d+) 章正文", r.user_text) for r in fake.requests_for("summarizer"))
    return [int(m.group(1)) for m in found if m]


def _wait(qloop: qasync.QEventLoop, done: Callable[[], bool], timeout: float = 60) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while not done():
            if loop.time() > end:
                raise TimeoutError("the window did not get there")
            await asyncio.sleep(0.02)

    qloop.run_until_complete(main())


def _window(qtbot: QtBot, novel: Path) -> MainWindow:
    window = MainWindow(settings=AppSettings())
    qtbot.addWidget(window)
    window.resize(1366, 768)
    window.show()
    assert window.open_novel(novel, remember=False)
    window.show_start_page()
    return window


def _open_from_start_page(qloop: qasync.QEventLoop, window: MainWindow) -> AdoptDialog:
    page = window.start_page
    assert page.action == "adopt"
    page.recommend_button.click()
    dialog = window.runs.adopt.dialog
    assert dialog is not None and dialog.isVisible()
    _wait(qloop, dialog.start_button.isEnabled)
    return dialog


def _edit_world(dialog: ProposalDialog) -> None:
    form = dialog.form
    assert isinstance(form, WorldForm)
    rules = form.rules
    rules.set_text(rules.find_row("id", "W-001"), "rule", "残玉只认林枫，旁人碰之即碎")
    dialog.save_button.click()


class Answerer(DialogAnswerer):
    """The lifecycle test's answerer (接受 everything, by clicking), with the world rules edited first."""

    def _review(self, dialog: ProposalDialog) -> None:
        if dialog.spec.topic == "world review":
            self.topics.append(dialog.spec.topic)
            _edit_world(dialog)
            return
        super()._review(dialog)


def test_adopt_an_imported_book_in_the_window(
    qtbot: QtBot, qloop: qasync.QEventLoop, fake: FakeAnthropicServer, tmp_path: Path
) -> None:
    novel = imported_book(tmp_path)
    script_adoption(fake)
    window = _window(qtbot, novel)
    page = window.start_page
    assert page.recommend_button.text() == "接续已有书稿"
    assert "逐章分析书稿" in page.reason.text() and "开始前先显示费用" in page.reason.text()
    assert window.adopt_action.isEnabled()

    dialog = _open_from_start_page(qloop, window)
    estimate = dialog.estimate_label.text()
    assert "共 6 章：待分析 6 章（第 1-6 章），已分析 0 章" in estimate
    assert "预计费用约 $" in estimate and "tokens" in estimate
    assert fake.requests == []  # nothing is sent before 开始分析
    _shot(dialog, "1-estimate")

    answerer = Answerer(window, {})
    progress: list[tuple[int, int]] = []
    labels: list[str] = []  # what the dialog said at each step (it updates before this slot runs)

    def on_progress(done: int, total: int, _message: str) -> None:
        progress.append((done, total))
        labels.append(dialog.chapter_label.text())
        if done == 1:
            _shot(dialog, "2-progress")

    window.runs.adopt.controller.progress.connect(on_progress)
    dialog.start_button.click()
    assert window.pipeline.running and not window.adopt_action.isEnabled()
    assert not window.continue_action.isEnabled()
    # Chapter 1's line may show for less than a polling interval (the fake replies at once): it is looked
    # for in what the dialog said, not waited for on the screen.
    _wait(qloop, lambda: "第 1/6 章" in labels)
    _wait(qloop, lambda: dialog.stage != "running", timeout=90)

    assert answerer.errors == []
    assert answerer.topics == [
        "world review",
        "characters review",
        "storylines review",
        "adopt state",
        "adopt style",
    ]
    assert dialog.stage == "done", dialog.result_label.text()
    assert progress[-1] == (6, 6) and dialog.progress_bar.value() == 6
    result = dialog.result_label.text()
    assert "角色 2 个、规则 2 条、故事线 1 条、伏笔 1 条" in result
    assert "下一步：规划第 1 卷" in result
    _shot(dialog, "3-done")
    _wait(qloop, lambda: not window.pipeline.running)
    assert window.adopt_action.isEnabled() and window.plan_action.isEnabled()
    assert page.action == "plan" and page.recommend_button.text() == "规划第 1 卷"
    dialog.close_button.click()
    assert window.runs.adopt.dialog is None

    with NovelStore.open(novel, write=False) as store:
        assert store.summary(6) == "第6章摘要：林枫来到残玉，陈老叮嘱他别急。"
        assert store.document_json("world/rules.json")["rules"][0]["rule"] == "残玉只认林枫，旁人碰之即碎"
        lin = store.document_json("characters/active/lin-feng.json")
        assert {c["type"] for c in lin["contracts"]} == {"capability", "personality"}
        assert store.document_json("storylines/storylines.json")["storylines"][0]["id"] == "main_arc"
        assert store.document_json("foreshadowing/global.json")["foreshadowing"][0]["id"] == "broken_jade"
        assert store.current_state()["characters"]["lin-feng"]["realm"] == "炼气一层"
        assert "句子短，动作推进" in store.document_json("style-profile.json")["writing_directives"]
        assert store.meta()["adopted"] == "done"


def test_a_failure_after_chapter_three_keeps_it_and_the_next_run_reads_only_four_to_six(
    qtbot: QtBot, qloop: qasync.QEventLoop, fake: FakeAnthropicServer, tmp_path: Path
) -> None:
    novel = imported_book(tmp_path)
    fake.script("summarizer", *(note_json(n) for n in (1, 2, 3)))
    fake.set_default("summarizer", Reply.http_error(500, message="服务器坏了"))
    window = _window(qtbot, novel)

    dialog = _open_from_start_page(qloop, window)
    dialog.start_button.click()
    _wait(qloop, lambda: dialog.stage != "running", timeout=90)
    assert dialog.stage == "failed"
    result = dialog.result_label.text()
    assert "第 4 章分析失败" in result and "已分析的 3 章已保存" in result and "第 4 章继续" in result
    assert dialog.chapter_label.text() == "第 3/6 章"
    _shot(dialog, "4-failed")
    _wait(qloop, lambda: not window.pipeline.running)
    assert set(_chapters_read(fake)) == {1, 2, 3, 4}
    assert window.start_page.action == "adopt"  # still to finish
    dialog.close_button.click()

    # Reopened from the menu: three chapters analysed; only 4-6 are read.
    fake.script("summarizer", *(note_json(n) for n in (4, 5, 6)))
    before = len(_chapters_read(fake))
    script_adoption(fake, range(0))  # the synthesis and the style
    window.adopt_action.trigger()
    dialog = window.runs.adopt.dialog
    assert dialog is not None
    _wait(qloop, dialog.start_button.isEnabled)
    assert "待分析 3 章（第 4-6 章），已分析 3 章" in dialog.estimate_label.text()
    answerer = DialogAnswerer(window, {})
    dialog.start_button.click()
    _wait(qloop, lambda: dialog.stage != "running", timeout=90)
    assert dialog.stage == "done", dialog.result_label.text()
    assert answerer.errors == []
    assert _chapters_read(fake)[before:] == [4, 5, 6]
    dialog.close_button.click()
    with NovelStore.open(novel, write=False) as store:
        assert [store.summary(n) is not None for n in range(1, 7)] == [True] * 6
        assert store.meta()["adopted"] == "done"


def test_stop_keeps_the_chapters_read_and_says_where_the_next_run_goes_on(
    qtbot: QtBot, qloop: qasync.QEventLoop, fake: FakeAnthropicServer, tmp_path: Path
) -> None:
    novel = imported_book(tmp_path)
    fake.script("summarizer", note_json(1), note_json(2), Reply.slow(note_json(3), delay=0.05, chunk_size=8))
    window = _window(qtbot, novel)
    dialog = _open_from_start_page(qloop, window)
    controller = window.runs.adopt.controller

    def stop_after_two(done: int, _total: int, _message: str) -> None:
        if done == 2:
            QTimer.singleShot(0, dialog.stop_button.click)

    controller.progress.connect(stop_after_two)
    dialog.start_button.click()
    _wait(qloop, lambda: dialog.stage != "running", timeout=60)
    assert dialog.stage == "stopped"
    assert "已停止" in dialog.result_label.text()
    assert "已分析的 2 章已保存；再次运行会从第 3 章继续" in dialog.result_label.text()
    _shot(dialog, "5-stopped")
    _wait(qloop, lambda: not window.pipeline.running)
    dialog.close_button.click()
    with NovelStore.open(novel, write=False) as store:
        assert store.summary(2) is not None and store.summary(3) is None


def test_the_menu_says_plainly_when_the_novel_was_not_imported(
    qtbot: QtBot, window: MainWindow, alerts: RecordingAlerts
) -> None:
    window.adopt_action.trigger()
    assert window.runs.adopt.dialog is None
    assert "不是从书稿导入的" in alerts.shown[-1][2]


def test_the_estimate_names_a_model_without_a_price_and_reads_in_english(qtbot: QtBot) -> None:
    from novel_desktop import i18n
    from novel_desktop.ui.adopt_dialog import estimate_lines, summary_line

    est = SimpleNamespace(
        chapters=6,
        to_read=[4, 5, 6],
        already=3,
        input_tokens=12_345,
        output_tokens=2_000,
        cost_usd=0.0,
        reader_model="qwen2.5:7b",
        synthesis_model="qwen2.5:7b",
        unpriced=["qwen2.5:7b"],
    )
    lines = estimate_lines(est)
    assert lines[0] == "共 6 章：待分析 3 章（第 4-6 章），已分析 3 章"
    assert lines[-1] == "价格表里没有 qwen2.5:7b 的价格，这部分费用没有算进去"
    summary = AdoptSummary(characters=1, rules=2, storylines=1, foreshadowing=0, next_step="")
    i18n.set_language("en")
    try:
        lines = estimate_lines(est)
        assert lines[0] == "Chapters in the book: 6; to analyse: 3 (chapters 4-6); already analysed: 3"
        assert lines[1] == "Estimated input: about 12,345 tokens; output: about 2,000 tokens"
        assert lines[-1] == "No price is set for qwen2.5:7b: its cost is not included"
        assert summary_line(summary) == "Characters: 1, rules: 2, storylines: 1, foreshadowing threads: 0"
        assert all(ord(c) < 0x3000 for c in "".join(lines))  # ASCII punctuation, no Chinese left
    finally:
        i18n.set_language("zh")


def test_every_adoption_string_has_an_english_translation_with_the_same_slots() -> None:
    import ast
    import json
    import string

    from novel_desktop.paths import resource

    entries: dict[str, str] = {}
    for path in sorted(resource("i18n", "en").glob("*.json")):
        entries.update(json.loads(path.read_text(encoding="utf-8")))
    root = Path(__file__).resolve().parents[2] / "novel_desktop"
    keys = []
    for name in ("ui/adopt_dialog.py", "ui/flows/adopt.py", "controllers/adopt_controller.py"):
        text = (root / name).read_text("utf-8")
        keys += [
            ast.literal_eval(f'"{m.group(1)}"') for m in re.finditer(r'tr\(\s*"((?:[^"\\]|\\.)*)"', text)
        ]
    assert len(keys) >= 20
    assert [k for k in keys if k not in entries] == []

    def slots(text: str) -> set[str]:
        return {name for _, name, _, _ in string.Formatter().parse(text) if name}

    assert [k for k in keys if slots(k) != slots(entries[k])] == []
