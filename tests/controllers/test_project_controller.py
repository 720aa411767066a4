"""The project controller's file-level helpers the window's flows use instead of storage."""

from __future__ import annotations

from pathlib import Path

import pytest

from novel_desktop.controllers.project_controller import ProjectController, ProjectLocked


def test_the_export_format_follows_the_suffix() -> None:
    assert ProjectController.export_format("书.epub") == "epub"
    assert ProjectController.export_format("书.docx") == "docx"
    assert ProjectController.export_format("书.whatever") == "txt"


def test_every_volume_has_an_outline_path(project: ProjectController) -> None:
    paths = project.outline_paths()
    assert paths and all(p.endswith("/outline.md") for p in paths)
    assert len(paths) == len(project.volumes())


def test_a_novel_held_by_another_controller_raises_project_locked(
    project: ProjectController, seed_novel: Path
) -> None:
    other = ProjectController()
    with pytest.raises(ProjectLocked) as caught:
        other.open(seed_novel)
    assert not caught.value.stale
    assert not other.is_open
