"""The agent prompt templates in ``prompts/`` load, render completely and say what the seed requires.

Each template is rendered with a realistic context built from the two-chapter seed project fixture (the
novel 《青石问道》), and the complete JSON examples inside the templates are validated against the domain
models the agents' outputs are parsed into.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest

from novel_desktop.agents.context import estimate_parts, estimate_tokens
from novel_desktop.agents.judge_panels import FULL_PANEL
from novel_desktop.agents.summary_parts import WHOLE_PART
from novel_desktop.agents.templates import (
    CACHE_MARKER,
    EMPTY_VALUE,
    MAX_SYSTEM_BLOCKS,
    TEMPLATE_NAMES,
    USER_MARKER,
    MissingSlotError,
    PromptTemplate,
    TemplateError,
    TemplateFormatError,
    UnknownSlotError,
    load_template,
    parse_template,
    render,
    render_template,
)
from novel_desktop.domain.agent_returns import RequiresUserDecision, parse_agent_return
from novel_desktop.domain.characters import Character, Relationships
from novel_desktop.domain.contracts import ChapterContract
from novel_desktop.domain.evaluation import DIMENSION_WEIGHTS, Evaluation
from novel_desktop.domain.foreshadowing import VolumeForeshadowing
from novel_desktop.domain.refine import RefineEdits, apply_edits
from novel_desktop.domain.state_ops import apply_patch
from novel_desktop.domain.state_patch import PATH_TOP_LEVEL, ForeshadowAction, OpKind, validate_op
from novel_desktop.domain.storylines import StorylineSchedule, StorylinesFile
from novel_desktop.domain.style import AiBlacklist, StyleProfile
from novel_desktop.domain.world import WorldRules
from novel_desktop.llm.roles import AgentRole
from novel_desktop.paths import prompts_dir

PROJECT = Path(__file__).resolve().parent.parent / "fixtures" / "seed_project"

#: The slot interface of every template: the context assemblers are written against these names.
EXPECTED_SLOTS: dict[str, set[str]] = {
    "world_builder": {
        "project_brief",
        "research_notes",
        "mode",
        "existing_world_docs",
        "existing_rules",
        "existing_storylines",
        "update_request",
    },
    "character_weaver": {
        "project_brief",
        "world_rules",
        "world_docs",
        "mode",
        "current_chapter",
        "existing_characters",
        "relationships",
        "outline_basis",
        "update_request",
    },
    "plot_architect": {
        "project_brief",
        "world_rules",
        "world_docs",
        "storylines",
        "volume_num",
        "chapter_start",
        "chapter_end",
        "author_direction",
        "prev_volume_review",
        "active_characters",
        "current_state",
        "global_foreshadowing",
    },
    "chapter_writer": {
        "platform_profile",
        "style_profile",
        "writing_directives",
        "ai_blacklist",
        "world_hard_rules",
        "world_soft_rules",
        "storyline_spec",
        "volume_outline",
        "chapter_num",
        "storyline_id",
        "storyline_memory",
        "storyline_context",
        "adjacent_memories",
        "concurrent_state",
        "chapter_outline",
        "chapter_contract",
        "character_contracts",
        "recent_summaries",
        "current_state",
        "foreshadowing_tasks",
        "style_drift",
    },
    "reviser": {
        "platform_profile",
        "style_profile",
        "ai_blacklist",
        "world_hard_rules",
        "world_soft_rules",
        "storyline_spec",
        "chapter_num",
        "storyline_id",
        "revision_round",
        "storyline_memory",
        "chapter_outline",
        "chapter_contract",
        "character_contracts",
        "chapter_draft",
        "violations",
        "required_fixes",
    },
    "book_reader": {"chapter_num", "synopsis", "chapter_content"},
    "book_synthesis": {"book_title", "chapter_count", "last_chapter", "notes_digest", "update_request"},
    "summarizer": {
        "entity_roster",
        "storylines_overview",
        "chapter_num",
        "storyline_id",
        "base_state_version",
        "convergence_note",
        "storyline_whitelist",
        "current_state",
        "active_foreshadowing",
        "storyline_memory",
        "writer_hints",
        "summary_part",
        "chapter_content",
    },
    "style_analyzer": {
        "source_type",
        "reference_author",
        "known_characters",
        "style_metrics",
        "style_samples",
    },
    "style_refiner": {
        "style_profile",
        "writing_directives",
        "ai_blacklist",
        "chapter_num",
        "style_drift",
        "refine_focus",
        "analysis_facts",
        "change_budget",
        "chapter_draft",
    },
    "length_editor": {
        "platform_profile",
        "style_profile",
        "writing_directives",
        "ai_blacklist",
        "chapter_num",
        "length_task",
        "chapter_outline",
        "chapter_draft",
    },
    "fix_suggester": {
        "style_profile",
        "ai_blacklist",
        "chapter_num",
        "chapter_outline",
        "chapter_contract",
        "judge_issues",
        "chapter_content",
    },
    "quality_judge": {
        "platform_profile",
        "dimension_weights",
        "opening_checklist",
        "style_profile",
        "ai_blacklist",
        "world_rules",
        "storyline_spec",
        "storyline_schedule",
        "chapter_num",
        "storyline_context",
        "storyline_whitelist",
        "chapter_outline",
        "chapter_contract",
        "character_contracts",
        "prev_summary",
        "analysis_facts",
        "judge_panel",
        "chapter_content",
    },
    "consistency_auditor": {
        "world_rules",
        "storylines",
        "window_start",
        "window_end",
        "character_contracts",
        "current_state",
        "foreshadowing_status",
        "entity_findings",
        "summaries",
    },
}

#: Slots whose values are stable across the chapters of a volume and so belong in the cached system part.
STABLE_SLOTS = {
    "project_brief",
    "dimension_weights",
    "research_notes",
    "platform_profile",
    "style_profile",
    "writing_directives",
    "ai_blacklist",
    "world_rules",
    "world_hard_rules",
    "world_soft_rules",
    "world_docs",
    "storyline_spec",
    "storylines",
    "volume_outline",
    "storyline_schedule",
    "storylines_overview",
}


# --- realistic context ---------------------------------------------------------------------------------


def _read(rel: str) -> str:
    return (PROJECT / rel).read_text(encoding="utf-8")


def _load(rel: str) -> Any:
    return json.loads(_read(rel))


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _rule_lines(kind: str) -> str:
    rules = WorldRules.model_validate(_load("world/rules.json")).rules
    lines = []
    for rule in rules:
        if kind in ("all", rule.constraint_type):
            extra = f"（例外：{'；'.join(rule.exceptions)}）" if rule.exceptions else ""
            lines.append(f"- {rule.id} [{rule.constraint_type}] {rule.rule}{extra}")
    return "\n".join(lines)


def _ls_lines() -> str:
    spec = _load("storylines/storyline-spec.json")
    return "\n".join(f"- {r['id']} [{r['constraint_type']}] {r['rule']}" for r in spec["rules"])


def _blacklist() -> str:
    return "、".join(AiBlacklist.model_validate(_load("ai-blacklist.json")).effective_words())


def _style_profile() -> str:
    profile = _load("style-profile.json")
    profile.pop("writing_directives", None)
    return _compact(profile)


def _directives() -> str:
    return "\n".join(f"- {d}" for d in _load("style-profile.json")["writing_directives"])


def _characters() -> list[Character]:
    return [
        Character.model_validate(_load(f"characters/active/{slug}.json")) for slug in ("lin-feng", "chen-lao")
    ]


def _character_contracts() -> str:
    blocks = []
    for character in _characters():
        contracts = "\n".join(f"  - {c.id} [{c.type}] {c.rule}" for c in character.contracts)
        blocks.append(
            f"- {character.name}（{character.id}，别称：{'、'.join(character.aliases)}）"
            f"语癖：{character.speech_pattern}\n{contracts}"
        )
    return "\n".join(blocks)


def _chapter_text(number: int) -> str:
    return _read(f"chapters/chapter-{number:03d}.md")


def _summary_text(number: int) -> str:
    text = _read(f"summaries/chapter-{number:03d}-summary.md")
    return "\n".join(line for line in text.splitlines() if not line.startswith("<!--"))


def _outline_section(number: int) -> str:
    outline = _read("volumes/vol-01/outline.md")
    match = re.search(rf"## 第 {number} 章.*?(?=\n## |\Z)", outline, re.DOTALL)
    assert match
    return match.group(0).strip()


def realistic_context(name: str) -> dict[str, str]:
    """A context for ``name`` as the assembler would build it for chapter 3 of the fixture novel."""
    state = _compact(_load("state/current-state.json"))
    previous = _load("volumes/vol-01/chapter-contracts/chapter-002.json")
    contract3 = {
        "chapter": 3,
        "storyline_id": "main_arc",
        "preconditions": {
            # The previous chapter's postconditions, as PlotArchitect derives them.
            "character_states": previous["postconditions"]["state_changes"],
            "required_world_rules": ["W-001", "W-003"],
        },
        "objectives": [
            {"id": "OBJ-003-1", "type": "plot", "required": True, "description": "林枫凭残玉获准参加考核"},
            {
                "id": "OBJ-003-2",
                "type": "foreshadowing",
                "action": "plant",
                "target": "sect_token",
                "description": "守门弟子看见残玉时变了脸色",
            },
        ],
        "acceptance_criteria": ["OBJ-003-1 在正文中明确体现", "不违反 W-001, W-003", "不违反 C-LINFENG-001"],
    }
    ChapterContract.model_validate(contract3)
    storyline_ctx = _compact(
        {
            "last_chapter_on_this_line": 2,
            "last_chapter_summary": "残玉夜里发光，陈老带林枫到了苍梧山脚",
            "line_arc_progress": "40%",
        }
    )
    memory = _read("storylines/main_arc/memory.md")
    draft = _chapter_text(2)
    common = {
        "project_brief": _read("brief.md"),
        "research_notes": _read("research/notes.md"),
        "platform_profile": "起点中文网：每章 2500-3500 字；章末必须留钩子（悬念、反转或未完成的动作）。",
        "style_profile": _style_profile(),
        "writing_directives": _directives(),
        "ai_blacklist": _blacklist(),
        "world_rules": _rule_lines("all"),
        "world_hard_rules": _rule_lines("hard"),
        "world_soft_rules": _rule_lines("soft"),
        "world_docs": _read("world/rules.md"),
        "storyline_spec": _ls_lines(),
        "storylines": _compact(_load("storylines/storylines.json")["storylines"]),
        "storyline_schedule": _compact(_load("volumes/vol-01/storyline-schedule.json")),
        "volume_outline": _read("volumes/vol-01/outline.md"),
        "chapter_num": "3",
        "storyline_id": "main_arc",
        "storyline_memory": memory,
        "storyline_context": storyline_ctx,
        "storyline_whitelist": "- 本章故事线：「林枫问道」（main_arc，active）\n"
        "- 不在白名单（本章不得出场）：「靖海计划」（jinghai_plan，dormant）：许象乾",
        "adjacent_memories": "",
        "concurrent_state": "",
        "chapter_outline": _outline_section(3),
        "chapter_contract": _compact(contract3),
        "character_contracts": _character_contracts(),
        "recent_summaries": _summary_text(1) + "\n\n" + _summary_text(2),
        "current_state": state,
        "foreshadowing_tasks": "- 埋设 sect_token：守门弟子看见残玉时变了脸色，不点破原因",
        "style_drift": "对话比例 0.22，低于基线 0.35：多用对话推进",
        "chapter_draft": draft,
        "chapter_content": draft,
        "analysis_facts": "AI 黑名单命中 1.5 次/千字（不禁×1）；相邻 5 句重复句式 0 处；外线实体泄漏：无",
    }
    specific: dict[str, dict[str, str]] = {
        "world_builder": {
            "mode": "增量更新",
            "existing_world_docs": _read("world/rules.md"),
            "existing_rules": _compact(_load("world/rules.json")),
            "existing_storylines": _compact(_load("storylines/storylines.json")),
            "update_request": "第二卷要写苍梧宗外门，需要外门的层级、杂役院规矩和月例灵石制度",
        },
        "character_weaver": {
            "mode": "新增角色",
            "current_chapter": "5",
            "existing_characters": _character_contracts(),
            "relationships": _compact(_load("characters/relationships.json")),
            "outline_basis": "第二卷第 7 章：林枫偷听夜课被苏晚发现，苏晚替他遮掩",
            "update_request": "新增配角苏晚：外门弟子，十六岁，林枫在外门的第一个盟友",
        },
        "plot_architect": {
            "volume_num": "2",
            "chapter_start": "6",
            "chapter_end": "40",
            "author_direction": "第二卷写外门，节奏放慢一点，多写宗门日常和同门关系",
            "prev_volume_review": "第一卷 5 章完成：林枫入门；chen_lao_past 已回收；sect_token 推进中",
            "active_characters": _character_contracts(),
            "global_foreshadowing": _compact(_load("foreshadowing/global.json")),
        },
        "reviser": {
            "revision_round": "第 1 次修订，最多 2 次",
            "violations": '- C-CHENLAO-001（high）：陈老主动讲起旧事。证据："二十年前，我也在这道门里。"',
            "required_fixes": "- 倒数第 4 段：删去陈老讲旧事的台词，改成他用反问岔开话题",
        },
        "summarizer": {
            "entity_roster": "- 角色：lin-feng = 林枫（小枫）；chen-lao = 陈老（陈掌柜）\n"
            "- 物品：broken-jade = 残玉\n- 地点：qingshi-town = 青石镇\n- 势力：cangwu-sect = 苍梧宗",
            "storylines_overview": "- main_arc 林枫问道（主线，POV 林枫，势力 苍梧宗）",
            "base_state_version": "2",
            "convergence_note": "本章不是交汇事件章",
            "active_foreshadowing": "- broken_jade：半块水云纹残玉（advanced）\n- chen_lao_past：陈老旧事（planted）",
            "writer_hints": '{"hints":[{"op":"set","path":"characters.lin-feng.location","value":"苍梧宗山门"}]}',
            "summary_part": WHOLE_PART,
        },
        "book_reader": {
            "synopsis": "## 已出场人物（沿用这些名字）\n林枫（小枫）、陈老\n\n## 最近几章摘要\n- 第 1 章："
            + _summary_text(1),
        },
        "book_synthesis": {
            "book_title": "青石问道",
            "chapter_count": "2",
            "last_chapter": "2",
            "notes_digest": "## 人物\n- 林枫：protagonist；出场 2 章\n\n## 各章摘要\n- 第 1 章："
            + _summary_text(1),
            "update_request": "",
        },
        "style_analyzer": {
            "source_type": "original",
            "reference_author": "",
            "known_characters": "lin-feng：林枫\nchen-lao：陈老",
            "style_metrics": "平均句长 14.2 字；对话比例 0.35；比喻 0.8 次/千字；AI 黑名单命中 0 次",
            "style_samples": _chapter_text(1) + "\n\n" + _chapter_text(2),
        },
        "style_refiner": {
            "refine_focus": "",
            "change_budget": f"初稿 {len(draft)} 字，修改总量上限 {int(len(draft) * 0.15)} 字（15%）",
        },
        "quality_judge": {
            "judge_panel": FULL_PANEL,
            "prev_summary": _summary_text(2),
            "dimension_weights": "- plot_logic（情节逻辑）：0.18\n- character（角色塑造）：0.16",
            "opening_checklist": "本章是开篇第 3 章（起点中文网），逐条核对：\n1. 钩子：……\n本章前 300 字：\n「山门前」",
        },
        "length_editor": {
            "length_task": "扩写。本章现有 1,820 字，低于平台要求 2,500-4,000 字。请补写约 680-1,430 字。",
        },
        "fix_suggester": {
            "judge_issues": "1. 问题：陈老的对话不符合人物设定，过于热情\n2. 必须修改（第三段）：残玉要在本章出现",
        },
        "consistency_auditor": {
            "window_start": "1",
            "window_end": "2",
            "foreshadowing_status": _compact(_load("foreshadowing/global.json")),
            "entity_findings": "- 第 2 章出现「陈掌柜」，与陈老（chen-lao）的别称一致",
            "summaries": _summary_text(1) + "\n\n" + _summary_text(2),
        },
    }
    merged = common | specific.get(name, {})
    return {slot: merged[slot] for slot in EXPECTED_SLOTS[name]}


def _json_blocks(name: str) -> list[Any]:
    """The complete JSON examples (```json fenced blocks) in a template file."""
    text = (prompts_dir() / f"{name}.md").read_text(encoding="utf-8")
    return [json.loads(block) for block in re.findall(r"```json\s*\n(.*?)\n```", text, re.DOTALL)]


def _rendered(name: str) -> tuple[PromptTemplate, str, str]:
    template = load_template(name)
    prompt = render(template, realistic_context(name))
    return template, "\n\n".join(prompt.system_blocks), prompt.user


# --- loading and rendering -----------------------------------------------------------------------------


def test_every_agent_role_has_a_template() -> None:
    roles = {role.value for role in AgentRole} - {"judge_secondary"}
    # The fix suggester (the reviser's model), the length editor (the refiner's) and the adoption's book
    # reader (the summarizer's) and synthesis (the world builder's) have no role of their own.
    own_model = {"fix_suggester", "length_editor", "book_reader", "book_synthesis"}
    assert roles == set(TEMPLATE_NAMES) - own_model
    on_disk = {path.stem for path in prompts_dir().glob("*.md") if path.stem != "README"}
    assert on_disk == set(TEMPLATE_NAMES)


@pytest.mark.parametrize("name", TEMPLATE_NAMES)
def test_template_loads_with_its_slot_interface(name: str) -> None:
    template = load_template(name)
    assert template.slots == EXPECTED_SLOTS[name]
    assert 1 <= len(template.system_sections) <= MAX_SYSTEM_BLOCKS
    for heading in ("# 角色", "# 目标", "# 约束", "# 输出格式"):
        assert heading in template.system_sections[0], heading
    # No per-call value (chapter text, draft, state) sits in the cached system part.
    assert template.system_slots <= STABLE_SLOTS, template.system_slots - STABLE_SLOTS
    # Maintainer notes are not sent to the model.
    assert "<!--" not in "".join(template.system_sections) + template.user


@pytest.mark.parametrize("name", TEMPLATE_NAMES)
def test_rendering_with_a_realistic_context_fills_every_slot(name: str) -> None:
    context = realistic_context(name)
    prompt = render_template(name, context)
    text = prompt.text
    for slot in EXPECTED_SLOTS[name]:
        assert "{" + slot + "}" not in text, slot
    assert not re.search(r"\{[a-z][a-z0-9_]*\}", text)
    for slot, value in context.items():
        assert (value.strip() or EMPTY_VALUE) in text, slot
    assert len(prompt.system_blocks) == len(load_template(name).system_sections)


@pytest.mark.parametrize("name", TEMPLATE_NAMES)
def test_a_missing_slot_is_named(name: str) -> None:
    context = realistic_context(name)
    dropped = sorted(context)[:2]
    for slot in dropped:
        del context[slot]
    with pytest.raises(MissingSlotError) as info:
        render_template(name, context)
    assert info.value.slots == tuple(dropped)
    for slot in dropped:
        assert slot in str(info.value)


def test_an_unknown_context_key_is_rejected_unless_allowed() -> None:
    context = realistic_context("summarizer") | {"chapter_outlnie": "拼错的变量"}
    with pytest.raises(UnknownSlotError, match="chapter_outlnie"):
        render_template("summarizer", context)
    prompt = render_template("summarizer", context, allow_unknown=True)
    assert "拼错的变量" not in prompt.text


def test_values_are_inserted_verbatim_and_never_expanded_again() -> None:
    template = parse_template("t", "系统 {a}\n<!-- user -->\n用户 {b} {{b}}")
    prompt = render(template, {"a": '含 {b} 与 {"k": 1} 的正文', "b": "  "})
    assert prompt.system_blocks == ['系统 含 {b} 与 {"k": 1} 的正文']
    # A blank value becomes （无）; the escaped {{b}} is a literal {b}, not a slot.
    assert prompt.user == f"用户 {EMPTY_VALUE} {{b}}"
    assert template.slots == {"a", "b"}


def test_a_non_string_value_is_a_type_error() -> None:
    template = parse_template("t", "{a}\n<!-- user -->\n{b}")
    with pytest.raises(TypeError, match="a"):
        render(template, {"a": 3, "b": "x"})  # type: ignore[dict-item]


def test_json_examples_are_not_slots() -> None:
    template = parse_template("t", '输出 {"chapter": 1, "ops": [{"op": "set"}]}\n<!-- user -->\n{x}')
    assert template.slots == {"x"}


def test_markers_split_the_system_part_into_cache_blocks() -> None:
    text = f"A\n<!-- note -->\n{CACHE_MARKER}\nB {{s}}\n{CACHE_MARKER}\nC\n{USER_MARKER}\nD {{u}}"
    template = parse_template("t", text)
    assert template.system_sections == ["A", "B {s}", "C"]
    assert template.user == "D {u}"
    assert template.system_slots == {"s"}
    assert template.user_slots == {"u"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("A\nB", "缺少"),
        (f"A\n{USER_MARKER}\nB\n{USER_MARKER}\nC", "多个"),
        (f"A\n{USER_MARKER}\nB\n{CACHE_MARKER}\nC", "之前"),
        (
            "\n".join(
                [
                    "A",
                    CACHE_MARKER,
                    "B",
                    CACHE_MARKER,
                    "C",
                    CACHE_MARKER,
                    "D",
                    CACHE_MARKER,
                    "E",
                    USER_MARKER,
                    "U",
                ]
            ),
            "最多",
        ),
        (f"A\n{CACHE_MARKER}\n\n{USER_MARKER}\nU", "空段"),
        (f"A\n{USER_MARKER}\n  \n", "user 部分为空"),
    ],
)
def test_malformed_templates_are_refused(text: str, message: str) -> None:
    with pytest.raises(TemplateFormatError, match=message):
        parse_template("t", text)


def test_template_names_cannot_escape_the_prompts_folder(tmp_path: Path) -> None:
    with pytest.raises(TemplateError):
        load_template("../secrets")
    with pytest.raises(TemplateError, match="找不到"):
        load_template("no_such_agent", tmp_path)


@pytest.mark.parametrize("name", TEMPLATE_NAMES)
def test_the_system_part_comes_first_and_holds_only_stable_context(name: str) -> None:
    template = load_template(name)
    context = realistic_context(name)
    prompt = render(template, context)
    system = "\n\n".join(prompt.system_blocks)
    for slot in template.user_slots:
        value = context[slot].strip()
        # Short values (a chapter number) and excerpts of stable values (this chapter's part of the volume
        # outline) legitimately occur in the system part too.
        if len(value) > 20 and not any(value in context[s] for s in template.system_slots):
            assert value in prompt.user, slot
            assert value not in system, slot


def _slot_list(text: str) -> list[str]:
    return re.findall(r"(?<!\{)\{([a-z][a-z0-9_]*)\}(?!\})", text)


@pytest.mark.parametrize("name", TEMPLATE_NAMES)
def test_the_instruction_block_has_no_slots(name: str) -> None:
    # The first block is identical across novels, so every project shares the cached instructions.
    assert _slot_list(load_template(name).system_sections[0]) == []


def test_the_readme_documents_every_slot() -> None:
    readme = (prompts_dir() / "README.md").read_text(encoding="utf-8")
    assert CACHE_MARKER in readme and USER_MARKER in readme
    for name, slots in EXPECTED_SLOTS.items():
        # The first table row of a template is its slot list.
        row = next(line for line in readme.splitlines() if line.startswith(f"| `{name}` |"))
        for slot in slots:
            assert re.search(rf"\b{slot}\b", row), (name, slot)


# --- ChapterWriter -------------------------------------------------------------------------------------


def test_chapter_writer_injects_hard_rules_as_prohibitions() -> None:
    _, system, _ = _rendered("chapter_writer")
    marker = "违反以下规则的内容将被自动拒绝"
    assert marker in system
    hard = _rule_lines("hard")
    soft = _rule_lines("soft")
    # The hard rules follow the prohibition wording; the soft ones come after, under their own heading.
    assert system.index(marker) < system.index(hard) < system.index(soft)
    assert "W-003" not in hard and "W-003" in soft


def test_chapter_writer_has_the_anti_contamination_rules() -> None:
    _, system, user = _rendered("chapter_writer")
    for phrase in (
        "只使用当前线的角色、地点和事件",
        "POV 角色不知道其他线角色的行动和发现",
        "跨线信息必须经由叙事上合理的机制传递",
        "冻结线只作背景",
    ):
        assert phrase in system, phrase
    assert '<active_line id="main_arc">' in user


def test_chapter_writer_puts_the_active_storyline_first() -> None:
    context = realistic_context("chapter_writer") | {
        "adjacent_memories": "【jinghai_plan】许象乾秘密接触佑国使者",
        "concurrent_state": "- zhonggu_secret：遗迹线索指向龙宫（ch22）",
    }
    user = render_template("chapter_writer", context).user
    order = [
        user.index(context["storyline_memory"].strip()),
        user.index(context["storyline_context"]),
        user.index(context["adjacent_memories"]),
        user.index(context["concurrent_state"]),
        user.index(context["chapter_outline"]),
        user.index(context["recent_summaries"].strip()),
        user.index(context["current_state"]),
    ]
    assert order == sorted(order)
    # Frozen lines are marked as such, separately from the active and adjacent ones.
    assert (
        user.index("<frozen_lines") < user.index(context["concurrent_state"]) < user.index("</frozen_lines>")
    )


def test_chapter_writer_carries_every_spec_layer_and_the_de_ai_rules() -> None:
    _, system, user = _rendered("chapter_writer")
    context = realistic_context("chapter_writer")
    for slot in (
        "platform_profile",
        "writing_directives",
        "ai_blacklist",
        "storyline_spec",
        "volume_outline",
    ):
        assert context[slot].strip() in system, slot
    for slot in ("chapter_contract", "character_contracts", "style_drift", "foreshadowing_tasks"):
        assert context[slot].strip() in user, slot
    assert "LS-005" in system and "C-LINFENG-001" in user and "OBJ-003-1" in user
    for rule in ("对话带角色语癖", "反直觉", "场景描写每处不超过 2 句", "禁止连续 3 句相同句式", "AI 黑名单"):
        assert rule in system, rule
    assert "# 第N章 标题" in system
    assert user.startswith("# 任务单：续写第 3 章")


def test_chapter_writer_hint_example_uses_valid_ops() -> None:
    (hints,) = _json_blocks("chapter_writer")
    assert hints["chapter"] == 3
    assert hints["hints"]
    for op in hints["hints"]:
        assert validate_op(op) is None, op


def _estimate_tokens(text: str) -> int:
    """A deliberately pessimistic token count: one token per CJK character, one per 3 other characters."""
    cjk = sum(1 for ch in text if "\u3000" <= ch <= "\u9fff" or "\uff00" <= ch <= "\uffef")
    return cjk + (len(text) - cjk) // 3 + 1


def test_chapter_writer_template_is_lean() -> None:
    template = load_template("chapter_writer")
    bare = render(template, dict.fromkeys(template.slots, ""))
    assert _estimate_tokens(bare.text) < 3000


#: §8.4's per-call budget for the components the assembler injects (tokens): style profile + blacklist ~2K,
#: volume outline ~3K, three summaries ~3K, current state 3-5K, active characters ~5K, chapter outline ~1K.
BUDGET_8_4 = {
    "style": 2_000,
    "volume_outline": 3_000,
    "recent_summaries": 3_000,
    "current_state": 5_000,
    "character_contracts": 5_000,
    "chapter": 1_000,
}


def _chapter_500_context() -> dict[str, str]:
    """A context at chapter 500 filled up to the §8.4 budget, each component near its upper bound."""
    places = [
        "外门",
        "藏经阁",
        "后山",
        "问心阶",
        "东海渡口",
        "龙宫遗迹",
        "佑国边城",
        "剑冢",
        "听潮阁",
        "黑石礁",
    ]
    names = ["林枫", "苏晚", "陈老", "许象乾", "李龙川", "沈青", "韩七", "赵无咎", "孟婆婆", "白鲛"]
    outline = ["# 第十三卷 东海"] + [
        f"## 第 {n} 章 {places[n % 10]}风波\n- **Storyline**: {'main_arc' if n % 3 else 'jinghai_plan'}\n"
        f"- **POV**: {names[n % 10]}\n- **Location**: {places[(n + 3) % 10]}\n"
        f"- **Conflict**: {names[n % 10]}与{names[(n + 1) % 10]}在{places[n % 10]}为海图归属翻脸\n"
        f"- **Arc**: {names[n % 10]}意识到海族并非敌人\n- **Foreshadowing**: 推进 sea_map_{n % 5}\n"
        f"- **StateChanges**: {names[n % 10]}移至{places[(n + 3) % 10]}"
        for n in range(481, 521)
    ]
    state = {
        "schema_version": 1,
        "state_version": 499,
        "last_updated_chapter": 499,
        "characters": {
            f"char-{i}": {
                "location": places[i % 10],
                "emotional_state": ["警觉", "疑虑", "决意", "愤懑"][i % 4],
                "realm": "金丹中期",
                "injury": "左臂旧伤未愈，不能全力出剑" if i % 3 == 0 else "无",
                "relationships": {f"char-{j}": (i * 7 + j) % 100 - 50 for j in range(10) if j != i},
                "inventory": ["海图残页", "青铜令牌", "半块残玉", "避水珠", "传讯玉符"][: 1 + i % 5],
                "knows": ["许象乾与佑国有往来", "龙宫遗迹入口在黑石礁下"][: i % 3],
            }
            for i in range(24)
        },
        "items": {
            f"item-{i}": {"holder": f"char-{i % 14}", "condition": "完好", "origin": "东海龙宫旧物"}
            for i in range(20)
        },
        "locations": {f"loc-{i}": {"controlled_by": "景国水师", "danger": i % 5} for i in range(10)},
        "world_state": {
            "time_marker": "永安二十一年夏",
            "ongoing_events": ["东海封港", "佑国内乱", "海族互市中断"],
        },
        "active_foreshadowing": [f"sea_map_{i}" for i in range(5)] + ["jinghai_plan", "zhonggu_secret"],
    }
    contracts = "\n".join(
        f"- {names[i % 10]}（char-{i}，别称：{names[i % 10]}师兄）语癖：说话前先清嗓子，口头禅'依我看'；"
        f"目标：查清海图来历；内在矛盾：想护住同门，又不愿再受宗门驱使\n"
        + "\n".join(
            f"  - C-CHAR{i}-00{k} [{'capability' if k % 2 else 'personality'}] "
            f"当前修为金丹中期，不能御使元婴期以上的法宝；面对强敌先求智取，除非同伴遇险"
            for k in range(1, 6)
        )
        for i in range(14)
    )
    summary = (
        "林枫在东海渡口截下许象乾的密使，从其身上搜出半张海图，海图边缘的水云纹与残玉同源。"
        "苏晚认出密使腰间的佑国水师腰牌，两人连夜赶往听潮阁，却发现阁主已被人灭口，"
        "桌上留着一盏未凉的茶。林枫决定假扮密使，次日去黑石礁赴约。"
    )
    summaries = "\n\n".join(
        f"# 第 {n} 章摘要\n{summary * 5}\n\n- 伏笔：sea_map_{n % 5} 推进\n- 状态：林枫移至听潮阁，情绪决意"
        for n in (497, 498, 499)
    )
    hard_rules = "\n".join(
        f"- W-{i:03d} [hard] 金丹修士不得在凡人城池内动用法力，违者受宗门律惩处" for i in range(1, 13)
    )
    soft_rules = "\n".join(
        f"- W-{i:03d} [soft] 海族与人族每十年互市一次（例外：战时封港）" for i in range(13, 21)
    )
    return realistic_context("chapter_writer") | {
        "chapter_num": "500",
        "volume_outline": "\n\n".join(outline),
        "world_hard_rules": hard_rules,
        "world_soft_rules": soft_rules,
        "ai_blacklist": "、".join(
            ["不禁", "莫名的", "嘴角微微上扬", "眼中闪过一丝", "心中一凛", "深邃的眼眸"] * 12
        ),
        "recent_summaries": summaries,
        "current_state": _compact(state),
        "character_contracts": contracts,
        "storyline_memory": "- " + "许象乾在东海布下暗桩，林枫尚不知情。" * 25,
        "adjacent_memories": "【jinghai_plan】" + "佑国使者三日后抵达渡口。" * 40,
        "concurrent_state": "- zhonggu_secret：遗迹线索指向龙宫（ch472）\n- faction_internal：休眠",
        "chapter_outline": outline[20],
        "foreshadowing_tasks": "- 推进 sea_map_0：海图背面浮现潮汐刻度\n- 埋设 tide_bell：听潮阁的铜铃无风自响",
    }


def test_the_chapter_500_context_fills_the_section_8_4_budget() -> None:
    # The budget test below is only as strong as its context is large: each component sits near its bound.
    context = _chapter_500_context()
    assert _estimate_tokens(context["volume_outline"]) >= 0.9 * BUDGET_8_4["volume_outline"]
    assert _estimate_tokens(context["current_state"]) >= 0.6 * BUDGET_8_4["current_state"]  # §8.4: 3-5K
    assert _estimate_tokens(context["character_contracts"]) >= 0.8 * BUDGET_8_4["character_contracts"]
    assert _estimate_tokens(context["recent_summaries"]) >= 0.5 * BUDGET_8_4["recent_summaries"]


def test_chapter_writer_prompt_at_chapter_500_stays_within_budget() -> None:
    prompt = render_template("chapter_writer", _chapter_500_context())
    assert _estimate_tokens(prompt.text) < 25_000


# --- Reviser -------------------------------------------------------------------------------------------


def test_reviser_injects_the_required_fixes_and_keeps_the_rest() -> None:
    _, system, user = _rendered("reviser")
    context = realistic_context("reviser")
    assert "违反以下规则的内容将被自动拒绝" in system
    assert "只使用当前线的角色、地点和事件" in system
    assert "没有被修订指令或违规点名的段落保持原样" in system
    # The fixes come after the draft: the last thing the model reads is what to change.
    assert user.index(context["chapter_draft"].strip()) < user.index(context["required_fixes"])


# --- Summarizer ----------------------------------------------------------------------------------------


def test_summarizer_states_the_op_rules() -> None:
    _, system, user = _rendered("summarizer")
    for category in PATH_TOP_LEVEL:
        assert category in system, category
    for kind in OpKind:
        assert kind.value in system, kind
    for action in ForeshadowAction:
        assert action.value in system, action
    assert "2-4 层" in system and "slug" in system
    assert "base_state_version：2" in user
    assert "patch.base_state_version 必须是 2" in user
    assert "≤" in system or "不超过 300 字" in system
    assert "不超过 500 字" in system


def test_summarizer_example_is_a_patch_the_merger_accepts() -> None:
    (example,) = _json_blocks("summarizer")
    assert set(example) == {
        "chapter",
        "storyline_id",
        "summary",
        "patch",
        "foreshadowing",
        "storyline_memory",
        "cross_references",
        "leak_risk",
    }
    assert len(example["summary"]) <= 300
    assert len(example["storyline_memory"]) <= 500
    assert example["leak_risk"] in ("low", "medium", "high")
    ops = example["patch"]["ops"]
    assert {op["op"] for op in ops} == {kind.value for kind in OpKind}
    for op in ops:
        assert validate_op(op) is None, op
    # Applied to the fixture's state (version 2), nothing is dropped.
    result = apply_patch(_load("state/current-state.json"), example["patch"], now="2026-01-01T00:00:00")
    assert result.dropped == []
    assert result.state["characters"]["lin-feng"]["inventory"] == ["残玉", "考核木牌"]
    foreshadow_ids = {op["path"] for op in ops if op["op"] == "foreshadow"}
    assert {item["id"] for item in example["foreshadowing"]} == foreshadow_ids


# --- StyleRefiner --------------------------------------------------------------------------------------


def test_style_refiner_asks_for_exact_edits_within_the_limit() -> None:
    _, system, user = _rendered("style_refiner")
    assert "逐字复制" in system and "15%" in system
    assert "严禁改变情节" in system and "对话内容" in system and "伏笔" in system
    for category in ("黑名单", "句式", "风格"):
        assert category in system
    assert realistic_context("style_refiner")["change_budget"] in user


def test_style_refiner_example_applies_cleanly_to_a_draft() -> None:
    (example,) = _json_blocks("style_refiner")
    edits = RefineEdits.model_validate(example).edits
    assert all(edit.reason.split("：")[0] in ("黑名单", "句式", "风格") for edit in edits)
    filler = "雨还在下，药铺的门板被风吹得哐哐响，柜台上的算盘珠子沾了潮气。" * 6
    draft = (
        f"{filler}\n\n林枫不禁笑了一下，把药篓放下。\n\n他眼中闪过一丝慌乱。\n\n"
        f"他走到门口。他推开了门。他看见了雨。\n\n“这玉到底是谁的？”\n\n{filler}"
    )
    outcome = apply_edits(draft, edits)
    assert outcome.rejected == []
    assert "不禁" not in outcome.text and "“这玉到底是谁的？”" in outcome.text


def test_fix_suggester_example_is_located_and_applied_one_by_one() -> None:
    from novel_desktop.domain.suggestions import SuggestionsReply, apply_chosen, locate

    (example,) = _json_blocks("fix_suggester")
    reply = SuggestionsReply.model_validate(example)
    assert all(s.reason and s.issue for s in reply.suggestions)
    text = "# 第3章\n\n林枫心中一震，不禁握紧了拳头。\n\n“你来了。”陈老说。\n"
    located = locate(text, reply.suggestions)
    assert [s.id for s in located.suggestions] == ["S1", "S2"] and located.dropped == []
    only_second = apply_chosen(text, [located.suggestions[1]])
    assert "不禁握紧了拳头" in only_second and "药碾子" in only_second
    _, system, user = _rendered("fix_suggester")
    assert "逐字复制" in system and "残玉要在本章出现" in user


# --- QualityJudge --------------------------------------------------------------------------------------


def test_quality_judge_lists_the_eight_weighted_dimensions() -> None:
    _, system, _ = _rendered("quality_judge")
    for name, weight in DIMENSION_WEIGHTS.items():
        assert re.search(rf"- {name}（[^）]+）：{weight:.2f}\n", system), name
    assert len(re.findall(r"^  - [a-z_]+（[^）]+）：\d\.\d\d$", system, re.MULTILINE)) == len(
        DIMENSION_WEIGHTS
    )
    for phrase in ("high", "medium", "low", "required_fixes", "risk_flags", "contract_verification"):
        assert phrase in system
    assert "不要输出 requires_user_decision" in system


def test_quality_judge_grounds_style_scores_in_the_analysis_facts() -> None:
    _, system, user = _rendered("quality_judge")
    assert realistic_context("quality_judge")["analysis_facts"] in user
    assert "程序检测结果" in system and "次/千字" in system


def test_quality_judge_example_is_a_valid_evaluation() -> None:
    (example,) = _json_blocks("quality_judge")
    evaluation = Evaluation.model_validate(example)
    assert {name: score.weight for name, score in evaluation.scores.items()} == dict(DIMENSION_WEIGHTS)
    assert evaluation.overall == evaluation.computed_overall()
    assert evaluation.blocking_violations()
    assert evaluation.recommendation == "revise"
    assert evaluation.required_fixes
    assert set(evaluation.contract_results()) >= {"W-001", "C-LINFENG-001", "OBJ-003-1", "LS-001", "LS-005"}


# --- StyleAnalyzer -------------------------------------------------------------------------------------


def test_style_analyzer_example_is_a_style_profile() -> None:
    (example,) = _json_blocks("style_analyzer")
    profile = StyleProfile.model_validate(example)
    assert profile.writing_directives
    _, system, user = _rendered("style_analyzer")
    assert "程序统计结果" in system and realistic_context("style_analyzer")["style_metrics"] in user


# --- WorldBuilder, CharacterWeaver, PlotArchitect ------------------------------------------------------


def test_world_builder_examples() -> None:
    result, decision = _json_blocks("world_builder")
    rules = WorldRules.model_validate(result["rules"])
    assert len(rules.rules) <= 3 and rules.hard_rules()
    storylines = StorylinesFile.model_validate(result["storylines"])
    assert [s.id for s in storylines.storylines] == ["main_arc"]
    assert isinstance(parse_agent_return(decision), RequiresUserDecision)
    _, system, user = _rendered("world_builder")
    assert "不超过 3 条" in system and "hard" in system and "soft" in system
    assert user.startswith("# 任务单：增量更新")


def test_character_weaver_examples() -> None:
    result, decision = _json_blocks("character_weaver")
    characters = [Character.model_validate(c) for c in result["characters"]]
    assert all(c.contracts and c.goals and c.motivation and c.inner_conflict for c in characters)
    Relationships.model_validate({"relationships": result["relationships"]})
    assert isinstance(parse_agent_return(decision), RequiresUserDecision)
    _, system, _ = _rendered("character_weaver")
    assert "requires_user_decision" in system and "契约变更" in system


def test_plot_architect_returns_the_plan_for_confirmation() -> None:
    (example,) = _json_blocks("plot_architect")
    decision = parse_agent_return(example)
    assert isinstance(decision, RequiresUserDecision)
    data = decision.data
    contracts = [ChapterContract.model_validate(c) for c in data["chapter_contracts"]]
    for previous, current in itertools.pairwise(contracts):
        assert current.chapter == previous.chapter + 1
        # Each chapter's preconditions are the previous chapter's postconditions.
        assert current.preconditions.character_states == previous.postconditions.state_changes
    assert all(c.required_objectives() for c in contracts)
    StorylineSchedule.model_validate(data["storyline_schedule"])
    VolumeForeshadowing.model_validate(data["foreshadowing"])
    for contract in contracts:
        section = re.search(rf"## 第 {contract.chapter} 章.*?(?=\n## |\Z)", data["outline"], re.DOTALL)
        assert section, contract.chapter
        for field in ("Storyline", "POV", "Location", "Conflict", "Arc", "Foreshadowing", "StateChanges"):
            assert f"- **{field}**:" in section.group(0), field
    _, system, user = _rendered("plot_architect")
    assert "前章后置条件 = 本章前置条件" in system and "不超过 4 条" in system
    assert "第 2 卷（第 6-40 章）" in user


# --- ConsistencyAuditor --------------------------------------------------------------------------------


def test_consistency_auditor_example_findings() -> None:
    (example,) = _json_blocks("consistency_auditor")
    assert example["findings"]
    for finding in example["findings"]:
        assert set(finding) == {"chapter", "severity", "type", "description", "evidence", "suggestion"}
        assert finding["severity"] in ("high", "medium", "low")
    _, _, user = _rendered("consistency_auditor")
    assert "第 1-2 章" in user


@pytest.mark.parametrize("name", TEMPLATE_NAMES)
def test_every_json_example_parses(name: str) -> None:
    text = (prompts_dir() / f"{name}.md").read_text(encoding="utf-8")
    assert len(_json_blocks(name)) == text.count("```json\n")


def test_book_reader_and_synthesis_examples_are_what_the_adoption_parses() -> None:
    from novel_desktop.domain.adoption import BookSynthesis, ChapterNote
    from novel_desktop.domain.proposals import validate_payload

    (note,) = _json_blocks("book_reader")
    assert ChapterNote.model_validate(note).threads[0].action == "planted"
    (book,) = _json_blocks("book_synthesis")
    synthesis = BookSynthesis.model_validate(book)
    for kind in ("world", "characters", "storylines"):
        assert validate_payload(kind, getattr(synthesis, kind)) == [], kind


def test_a_prompts_estimate_is_its_whole_texts_however_its_parts_are_counted() -> None:
    # The prompt counts its parts (each remembered) and adds them up: the figure must be the whole text's,
    # across the joins between blocks, with CJK, ASCII and full-width text on both sides of each join.
    for name in ("quality_judge", "summarizer", "chapter_writer", "style_refiner"):
        prompt = render_template(name, realistic_context(name))
        assert len(prompt.system_blocks) >= 1
        assert prompt.tokens == estimate_tokens(prompt.text), name
        assert prompt.tokens == estimate_tokens(prompt.text), name  # again, from the remembered counts
        slots = {s.slot: s.tokens for s in prompt.slot_tokens()}
        for slot, value in prompt.values.items():
            assert slots[slot] == estimate_tokens(value) * prompt.uses.get(slot, 1)
    for parts in (["ab", "c"], ["a", "", "b"], ["甲a", "b乙", "，x"], [], ["x" * 7, "y" * 5]):
        assert estimate_parts(parts) == estimate_tokens("".join(parts)), parts
