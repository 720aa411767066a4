"""Agent roles: each LLM call is made on behalf of one, which picks its model, max_tokens and timeout."""

from __future__ import annotations

from enum import StrEnum


class AgentRole(StrEnum):
    """Who is calling the model. The value is sent as the ``x-novel-agent`` request header."""

    world_builder = "world_builder"
    character_weaver = "character_weaver"
    plot_architect = "plot_architect"
    chapter_writer = "chapter_writer"
    summarizer = "summarizer"
    style_analyzer = "style_analyzer"
    style_refiner = "style_refiner"
    quality_judge = "quality_judge"
    consistency_auditor = "consistency_auditor"
    #: Revisions of a chapter the quality gate sent back.
    reviser = "reviser"
    #: The stronger second judge of key chapters (volume start/end, storyline crossings).
    judge_secondary = "judge_secondary"


#: Roles that get the stronger model by default (the seed's split: creative quality and revision matter,
#: the per-chapter bulk work goes to the cheaper one).
STRONG_ROLES: frozenset[AgentRole] = frozenset(
    {
        AgentRole.world_builder,
        AgentRole.character_weaver,
        AgentRole.plot_architect,
        AgentRole.style_refiner,
        AgentRole.reviser,
        AgentRole.judge_secondary,
        AgentRole.consistency_auditor,
    }
)
