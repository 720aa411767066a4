"""The Qt fixtures the controller tests share with tests/ui (until they move to tests/conftest.py)."""

from tests.ui.conftest import fake, gui_thread_gc, project, qloop, seed_novel

__all__ = ["fake", "gui_thread_gc", "project", "qloop", "seed_novel"]
