"""What the story views read, as domain types: a volume's outline, chapters and contracts, the storylines and
their schedule, the foreshadowing plans — and where each of them is written back.

The views (outline, storylines, foreshadowing, project tree) hold a :class:`NovelReader` over the
:class:`ProjectController`; they never build a document path or parse a stored JSON file themselves. Every
read is a short SQLite query through the controller (milliseconds), so it runs in the GUI thread.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from novel_desktop.controllers.project_controller import ProjectController
from novel_desktop.domain.contracts import ChapterContract
from novel_desktop.domain.evaluation import Evaluation
from novel_desktop.domain.foreshadowing import (
    ForeshadowItem,
    GlobalForeshadowing,
    VolumeForeshadowing,
)
from novel_desktop.domain.outline import outline_field, outline_sections, section_title
from novel_desktop.domain.records import ChapterInfo, RevisionInfo
from novel_desktop.domain.storylines import StorylineSchedule, StorylinesFile, schedule_after_deleted_chapter
from novel_desktop.storage import layout
from novel_desktop.storage.export_file import ExportError, write_atomic

__all__ = ["ChapterInfo", "ChapterPlan", "NovelReader", "RevisionInfo"]

STORYLINES = "storylines/storylines.json"
WORLD_RULES = "world/rules.json"


@dataclass(frozen=True)
class ChapterPlan:
    """One chapter of a volume as the views show it: planned (outline, contract), written, or both."""

    number: int
    title: str
    section: str
    info: ChapterInfo | None
    storyline_id: str | None
    pov: str

    @property
    def written(self) -> bool:
        return self.info is not None


def _model(model: Any, data: Any) -> Any:
    if not isinstance(data, dict):
        return None
    try:
        return model.model_validate(data)
    except ValidationError:
        return None


class NovelReader:
    """Reads (and writes back) the story documents of the open novel through the ProjectController."""

    def __init__(self, project: ProjectController) -> None:
        self.project = project

    # ------------------------------------------------------------------ where things live
    @staticmethod
    def volume_prefix(volume: int) -> str:
        """The document-path prefix of everything that belongs to ``volume``."""
        return layout.volume_dir(volume)

    @staticmethod
    def is_foreshadowing(path: str) -> bool:
        """True for the global foreshadowing file and every volume's foreshadowing plan."""
        return path == layout.GLOBAL_FORESHADOWING or path.endswith("/foreshadowing.json")

    @staticmethod
    def objective_id(chapter: int, index: int) -> str:
        """The id a new contract objective gets, e.g. ``OBJ-012-3``."""
        return f"OBJ-{layout.num(chapter)}-{index}"

    # ------------------------------------------------------------------ checkpoint
    def current_volume(self) -> int:
        return int(self.project.checkpoint().get("current_volume") or 1) if self.project.is_open else 1

    def next_chapter(self) -> int:
        """The chapter being written, else the one after the last completed chapter."""
        checkpoint = self.project.checkpoint()
        inflight = int(checkpoint.get("inflight_chapter") or 0)
        return inflight or int(checkpoint.get("last_completed_chapter") or 0) + 1

    def inflight_chapter(self) -> int | None:
        raw = self.project.checkpoint().get("inflight_chapter")
        return int(raw) if raw else None

    def last_completed_chapter(self) -> int:
        return int(self.project.checkpoint().get("last_completed_chapter") or 0)

    # ------------------------------------------------------------------ outline
    def outline(self, volume: int) -> str | None:
        return self.project.document(f"{layout.volume_dir(volume)}/outline.md")

    def save_outline(self, volume: int, text: str) -> None:
        self.project.save_document(f"{layout.volume_dir(volume)}/outline.md", text)

    def save_renumbered_outline(self, volume: int, text: str, moved: dict[int, int | None]) -> None:
        """The outline after a section was deleted or moved (domain/outline_form.py), with the chapters'
        contracts following their sections (the file and its "chapter" number; a deleted section's contract
        goes), in one transaction."""
        documents = {f"{layout.volume_dir(volume)}/outline.md": text}
        delete = []
        for old, new in moved.items():
            path = layout.contract_path(volume, old)
            raw = self.project.document(path)
            if raw is None:
                continue
            delete.append(path)
            if new is None:
                continue
            try:
                data = json.loads(raw)
            except ValueError:
                data = None
            if isinstance(data, dict) and "chapter" in data:
                raw = json.dumps({**data, "chapter": new}, ensure_ascii=False, indent=2) + "\n"
            documents[layout.contract_path(volume, new)] = raw
        deleted = [old for old, new in moved.items() if new is None]
        schedule_path = f"{layout.volume_dir(volume)}/storyline-schedule.json"
        schedule = self.project.document_json(schedule_path) if deleted else None
        if isinstance(schedule, dict):
            # A deleted section moves the later chapters down one: the storylines' meetings follow them.
            shifted = schedule_after_deleted_chapter(schedule, deleted[0])
            if shifted != schedule:
                documents[schedule_path] = json.dumps(shifted, ensure_ascii=False, indent=2) + "\n"
        self.project.save_documents(documents, delete)

    @staticmethod
    def export_outline(path: Path, text: str) -> None:
        """Write an outline's Markdown to ``path`` (a temp file renamed: never half-written); a place that
        cannot be written raises :class:`OSError` with the reason for the author."""
        try:
            write_atomic(path, text.encode("utf-8"))
        except ExportError as exc:
            raise OSError(str(exc)) from exc

    # ------------------------------------------------------------------ contracts
    def contract_numbers(self, volume: int) -> list[int]:
        prefix = f"{layout.volume_dir(volume)}/chapter-contracts/"
        numbers = []
        for path in self.project.documents(prefix):
            m = re.search(r"chapter-(\d+)\.json$", path)
            if m:
                numbers.append(int(m.group(1)))
        return numbers

    def contract_json(self, volume: int, chapter: int) -> dict[str, Any] | None:
        data = self.project.document_json(layout.contract_path(volume, chapter))
        return data if isinstance(data, dict) else None

    def contract(self, volume: int, chapter: int) -> ChapterContract | None:
        result: ChapterContract | None = _model(ChapterContract, self.contract_json(volume, chapter))
        return result

    def save_contract(self, volume: int, chapter: int, data: dict[str, Any]) -> None:
        self.project.save_document(
            layout.contract_path(volume, chapter), json.dumps(data, ensure_ascii=False, indent=2) + "\n"
        )

    @staticmethod
    def validate_contract(data: dict[str, Any]) -> tuple[ChapterContract | None, list[tuple[str, str]]]:
        """The contract ``data`` describes, or where and why it does not validate (``(loc, message)``)."""
        try:
            return ChapterContract.model_validate(data), []
        except ValidationError as exc:
            return None, [(".".join(str(part) for part in e["loc"]), str(e["msg"])) for e in exc.errors()]

    def evaluation(self, chapter: int) -> Evaluation | None:
        """The judge's verdict on ``chapter``; None when there is none or it no longer parses."""
        result: Evaluation | None = _model(Evaluation, self.project.evaluation(chapter))
        return result

    def overall_score(self, chapter: int) -> float | None:
        """The judge's overall score, read even from an evaluation that no longer parses as a whole."""
        overall = (self.project.evaluation(chapter) or {}).get("overall")
        return float(overall) if isinstance(overall, int | float) and not isinstance(overall, bool) else None

    def chapters(self, volume: int, outline: str | None = None) -> list[ChapterPlan]:
        """The volume's chapters in order: outline sections, written chapters and contracted chapters."""
        text = self.outline(volume) if outline is None else outline
        sections = outline_sections(text or "")
        infos = {c.number: c for c in self.project.chapters() if c.volume == volume}
        contracts = set(self.contract_numbers(volume))
        plans = []
        for number in sorted(set(sections) | set(infos) | contracts):
            section = sections.get(number, "")
            info = infos.get(number)
            storyline: str | None = None
            if number in contracts:
                contract = self.contract(volume, number)
                storyline = contract.storyline_id if contract else None
            storyline = (
                storyline or outline_field(section, "storyline") or (info.storyline_id if info else None)
            )
            title = section_title(section) or (info.title if info else "")
            plans.append(
                ChapterPlan(number, title, section, info, storyline or None, outline_field(section, "pov"))
            )
        return plans

    # ------------------------------------------------------------------ storylines
    def storylines(self) -> StorylinesFile | None:
        result: StorylinesFile | None = _model(StorylinesFile, self.project.document_json(STORYLINES))
        return result

    def storylines_json(self) -> list[dict[str, Any]]:
        """The raw storyline entries (the project tree lists them even when one does not validate)."""
        data = self.project.document_json(STORYLINES)
        lines = data.get("storylines") if isinstance(data, dict) else None
        return [line for line in lines or [] if isinstance(line, dict)]

    def storyline_schedule(self, volume: int) -> StorylineSchedule | None:
        data = self.project.document_json(f"{layout.volume_dir(volume)}/storyline-schedule.json")
        result: StorylineSchedule | None = _model(StorylineSchedule, data)
        return result

    # ------------------------------------------------------------------ world, characters
    def world_rules_json(self) -> list[dict[str, Any]]:
        data = self.project.document_json(WORLD_RULES)
        rules = data.get("rules") if isinstance(data, dict) else None
        return [rule for rule in rules or [] if isinstance(rule, dict)]

    def active_characters_json(self) -> list[tuple[str, dict[str, Any]]]:
        """``(path, card)`` of every active character card (an unreadable card gives an empty dict)."""
        out = []
        for path in self.project.documents("characters/active/"):
            if path.endswith(".json"):
                data = self.project.document_json(path)
                out.append((path, data if isinstance(data, dict) else {}))
        return out

    # ------------------------------------------------------------------ foreshadowing
    def global_foreshadowing_json(self) -> list[dict[str, Any]]:
        data = self.project.document_json(layout.GLOBAL_FORESHADOWING)
        items = data.get("foreshadowing") if isinstance(data, dict) else None
        return [item for item in items or [] if isinstance(item, dict)]

    def global_foreshadowing(self) -> list[ForeshadowItem]:
        """The global foreshadowing items; one bad entry does not hide the rest."""
        data = self.project.document_json(layout.GLOBAL_FORESHADOWING)
        if not isinstance(data, dict):
            return []
        try:
            return GlobalForeshadowing.model_validate(data).foreshadowing
        except ValidationError:
            items = []
            for raw in data.get("foreshadowing") or []:
                try:
                    items.append(ForeshadowItem.model_validate(raw))
                except ValidationError:
                    continue
            return items

    def volume_foreshadowing(self) -> list[tuple[int, VolumeForeshadowing]]:
        """Every volume's foreshadowing plan that parses, by volume."""
        plans = []
        for volume, _title in self.project.volumes():
            data = self.project.document_json(f"{layout.volume_dir(volume)}/foreshadowing.json")
            plan: VolumeForeshadowing | None = _model(VolumeForeshadowing, data)
            if plan is not None:
                plans.append((volume, plan))
        return plans
