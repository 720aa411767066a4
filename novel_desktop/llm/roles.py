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

    @property
    def label(self) -> str:
        """The agent's name as the author knows it (Chinese), for every line the author reads."""
        return ROLE_NAMES[self]


#: The agents by the names the author knows them, in pipeline order: the one table the CLI's lines, the
#: pipeline's warnings and the window (ui/agent_names.py) use; the window translates them through tr().
ROLE_NAMES: dict[AgentRole, str] = {
    AgentRole.world_builder: "世界观构建",
    AgentRole.character_weaver: "角色编织",
    AgentRole.plot_architect: "情节架构",
    AgentRole.chapter_writer: "章节写作",
    AgentRole.summarizer: "摘要",
    AgentRole.style_analyzer: "风格分析",
    AgentRole.style_refiner: "去AI润色",
    AgentRole.quality_judge: "质量评审",
    AgentRole.consistency_auditor: "一致性审计",
    AgentRole.reviser: "修订",
    AgentRole.judge_secondary: "复核评审",
}


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


#: The per-chapter bulk after the writer, on the provider's fast tier when it has one (issue 18: the
#: summarizer, the refiner and the ordinary judge share one cached prefix, so they share one model).
FAST_ROLES: frozenset[AgentRole] = frozenset(
    {AgentRole.summarizer, AgentRole.style_refiner, AgentRole.quality_judge}
)
