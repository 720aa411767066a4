"""The agents by the names the author knows them (the settings dialog's model table, the cost by purpose)."""

from __future__ import annotations

from novel_desktop.controllers.settings_controller import AgentRole

#: The agents as the author knows them, in pipeline order.
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
