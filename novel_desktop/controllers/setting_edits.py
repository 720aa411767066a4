"""Later edits of what the agents invented (a rule, a character, a contract, a storyline, the volume plan),
as the window makes them: read the current payload, store the edited one as a job.

The same core as ``novel edit`` on the command line (:mod:`novel_desktop.pipeline.approval`): the payload
replaces what the novel holds of its kind in one transaction, and the kind's changelog gets a line naming
what changed and 「自第 N 章起生效」.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal

from novel_desktop.controllers.jobs import Job, JobRunner
from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.i18n import tr
from novel_desktop.storage.errors import ReadOnlyError

#: What the author reads for each kind (the window's titles and messages).
KIND_TITLES = {
    "world": "世界规则",
    "characters": "角色与契约",
    "storylines": "故事线",
    "volume_plan": "卷大纲与章节契约",
}


class SettingEdits(QObject):
    """Reads a kind's current payload and stores an edited one through the job runner."""

    #: An edit was stored: the kind and the paths written (the views refresh).
    saved = Signal(str, list)

    def __init__(self, project: ProjectController, jobs: JobRunner, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.project = project
        self.jobs = jobs

    def current_payload(self, kind: str, *, volume: int | None = None) -> dict[str, Any]:
        """What the novel holds now of ``kind`` (a few short reads)."""
        from novel_desktop.pipeline import approval

        return approval.current_payload(self.project.store, kind, volume=volume)

    def next_chapter(self) -> int:
        """The chapter an edit takes effect from by default: the next one to be written."""
        checkpoint = self.project.checkpoint()
        inflight = int(checkpoint.get("inflight_chapter") or 0)
        return inflight or int(checkpoint.get("last_completed_chapter") or 0) + 1

    def refusal(self) -> str | None:
        """Why the open novel cannot take an edit now (None when it can)."""
        if not self.project.is_open:
            return tr("没有打开的小说。")
        if self.project.readonly:
            return tr(
                "{path} 是只读打开的（文件只读，或另一个程序正在写它），不能保存修改；什么都没有改动。"
            ).format(path=self.project.path)
        return None

    def save(
        self,
        kind: str,
        payload: dict[str, Any],
        *,
        effective_from: int,
        note: str = "",
        volume: int | None = None,
    ) -> Job:
        """Store ``payload`` as a job (validated, one transaction, a changelog line); ``succeeded`` carries
        the paths written, ``failed`` the reason (a read-only or locked novel, an invalid payload)."""
        from novel_desktop.pipeline import approval

        refusal = self.refusal()
        store = self.project.store if self.project.is_open else None

        def work() -> list[str]:
            if refusal is not None:
                raise ReadOnlyError(refusal)
            assert store is not None
            return approval.apply_payload(
                store, kind, payload, effective_from=effective_from, note=note, volume=volume
            )

        job = self.jobs.run_in_thread(
            "setting_edit", work, title=tr("保存{what}").format(what=tr(KIND_TITLES.get(kind, kind)))
        )
        job.succeeded.connect(lambda paths: self._on_job_succeeded(kind, paths))
        return job

    def _on_job_succeeded(self, kind: str, paths: object) -> None:
        written = [str(p) for p in paths] if isinstance(paths, list) else []
        for path in written:
            self.project.document_changed.emit(path)
        if written:
            self.project.status_changed.emit()
        self.saved.emit(kind, written)
