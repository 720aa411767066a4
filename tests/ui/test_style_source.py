"""来源 on the style page says 手改 once the author saved a hand edit of a template's profile; a save without
a change, or with a source the author chose, keeps the source as it was."""

from __future__ import annotations

import json
import os

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.ui.style_drop import StylePage
from tests.ui.shots import save_shot

PROFILE = "style-profile.json"


def _template_profile(project: ProjectController) -> None:
    data = dict(project.document_json(PROFILE))
    data["source_type"] = "template"
    project.save_document(PROFILE, json.dumps(data, ensure_ascii=False))


def _page(qtbot: QtBot, project: ProjectController) -> StylePage:
    page = StylePage(project)
    qtbot.addWidget(page)
    page.resize(1200, 800)
    page.show()
    return page


def test_a_hand_edit_of_a_template_profile_says_hand_edited(qtbot: QtBot, project: ProjectController) -> None:
    _template_profile(project)
    page = _page(qtbot, project)
    assert page.source_box.currentText() == "风格模板"
    # Saved untouched: still the template's.
    qtbot.mouseClick(page.save_button, Qt.MouseButton.LeftButton)
    assert project.document_json(PROFILE)["source_type"] == "template"
    # The author changes a rule and saves: the profile is no longer the template's.
    page.forbidden_edit.setPlainText("不禁\n莫名的")
    qtbot.mouseClick(page.save_button, Qt.MouseButton.LeftButton)
    assert project.document_json(PROFILE)["source_type"] == "manual"
    assert page.source_box.currentText() == "手改"
    if os.environ.get("NOVEL_SHOTS"):
        save_shot(page, "style-source-hand-edited")
    # Read again from the novel, it still says so.
    page.load_from_project()
    assert page.source_box.currentText() == "手改"


def test_a_source_the_author_chose_is_kept(qtbot: QtBot, project: ProjectController) -> None:
    _template_profile(project)
    page = _page(qtbot, project)
    page.source_box.setCurrentIndex(page.source_box.findData("reference"))
    page.author_edit.setText("金庸")
    qtbot.mouseClick(page.save_button, Qt.MouseButton.LeftButton)
    saved = project.document_json(PROFILE)
    assert saved["source_type"] == "reference" and saved["reference_author"] == "金庸"
