"""Which seed format a project file holds, and whether its content matches it.

Used when a project folder is imported: a file that does not match is still kept, with these problems shown.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ValidationError

from novel_desktop.domain.characters import Character, Relationships
from novel_desktop.domain.checkpoint import Checkpoint
from novel_desktop.domain.contracts import ChapterContract
from novel_desktop.domain.evaluation import Evaluation
from novel_desktop.domain.foreshadowing import GlobalForeshadowing, VolumeForeshadowing
from novel_desktop.domain.novel_ask import AnswerSpec
from novel_desktop.domain.pipeline_log import PipelineLog
from novel_desktop.domain.state import CurrentState
from novel_desktop.domain.state_patch import StatePatch
from novel_desktop.domain.storylines import StorylineSchedule, StorylinesFile, StorylineSpec
from novel_desktop.domain.style import AiBlacklist, StyleProfile
from novel_desktop.domain.world import WorldRules

_VOL = r"volumes/vol-\d{2,}"
#: Project-relative path pattern → the model of its content (seed 004 §9.1-§9.2, §6.5, §6.6; seed 000).
MODELS: list[tuple[re.Pattern[str], type[BaseModel]]] = [
    (re.compile(p), m)
    for p, m in (
        (r"^\.checkpoint\.json$", Checkpoint),
        (r"^state/current-state\.json$", CurrentState),
        (r"^state/history/[^/]+\.json$", CurrentState),
        (r"^style-profile\.json$", StyleProfile),
        (r"^ai-blacklist\.json$", AiBlacklist),
        (r"^(staging/)?evaluations/chapter-\d{3,}-eval\.json$", Evaluation),
        (r"^logs/chapter-\d{3,}-log\.json$", PipelineLog),
        (r"^world/rules\.json$", WorldRules),
        (r"^characters/(active|retired)/[^/]+\.json$", Character),
        (r"^characters/relationships\.json$", Relationships),
        (rf"^{_VOL}/chapter-contracts/chapter-\d{{3,}}\.json$", ChapterContract),
        (rf"^{_VOL}/storyline-schedule\.json$", StorylineSchedule),
        (rf"^{_VOL}/foreshadowing\.json$", VolumeForeshadowing),
        (r"^storylines/storylines\.json$", StorylinesFile),
        (r"^storylines/storyline-spec\.json$", StorylineSpec),
        (r"^foreshadowing/global\.json$", GlobalForeshadowing),
        (r"^staging/novel-ask/[^/]+\.json$", AnswerSpec),
        (r"^staging/state/chapter-\d{3,}-delta\.json$", StatePatch),
    )
]


def model_for(path: str) -> type[BaseModel] | None:
    """The domain model of a project-relative path, if the seed defines one."""
    for pattern, model in MODELS:
        if pattern.match(path):
            return model
    return None


def problems_for(path: str, data: Any) -> list[str]:
    """Problems of ``data`` (parsed JSON) against the seed format of ``path``; [] when fine or unknown."""
    model = model_for(path)
    if model is None:
        return []
    try:
        model.model_validate(data)
    except ValidationError as exc:
        return [
            f"{'.'.join(str(p) for p in err['loc']) or '(根 root)'}: {err['msg']}"
            for err in exc.errors(include_url=False)
        ]
    return []
