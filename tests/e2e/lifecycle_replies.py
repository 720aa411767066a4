"""Canned replies of the planning agents (WorldBuilder, CharacterWeaver, PlotArchitect, StyleAnalyzer,
ConsistencyAuditor) for the lifecycle tests: what a well-behaved model would answer for 《青石问道》."""

from __future__ import annotations

import json
from typing import Any

#: A style sample unlike the canned chapters: long narrative sentences, no dialogue, so drift shows.
STYLE_SAMPLE = (
    "青石镇的清晨总是从药铺后院那口老井开始的，井水冰凉，打水的木桶撞在井壁上发出沉闷的回响，"
    "林枫把一桶一桶的水倒进药缸里，看着水面上浮起的碎叶慢慢沉下去，心里想着陈老昨夜对着那块残玉发呆的样子。"
    "镇子不大，一条石板街从南头的牌坊一直通到北头的土地庙，街两边的铺子在雾里一间一间地亮起灯来，"
    "卖豆腐的老汉推着车从药铺门口经过，车轮碾过石缝里积下的雨水，溅起的水花落在林枫刚扫过的台阶上。"
) * 8


def world_json() -> str:
    return json.dumps(
        {
            "rules": {
                "rules": [
                    {
                        "id": "W-001",
                        "category": "magic_system",
                        "rule": "凡人须引气入体方可修炼，引气之地灵气浓度须 ≥ 1级",
                        "constraint_type": "hard",
                        "exceptions": [],
                        "introduced_chapter": 1,
                    },
                    {
                        "id": "W-002",
                        "category": "geography",
                        "rule": "青石镇灵气浓度不足 1级，镇上无人能修炼",
                        "constraint_type": "hard",
                        "exceptions": [],
                        "introduced_chapter": 1,
                    },
                    {
                        "id": "W-003",
                        "category": "society",
                        "rule": "苍梧宗每三年开山收徒一次，只收十八岁以下少年",
                        "constraint_type": "soft",
                        "exceptions": ["持宗门信物者可破例"],
                        "introduced_chapter": 1,
                    },
                ]
            },
            "documents": [
                {"file": "rules.md", "content": "# 修炼规则\n\n灵气分九级，凡人引气入体方可修炼。"},
                {"file": "geography.md", "content": "# 地理\n\n青石镇在苍梧山南麓，灵气稀薄。"},
            ],
            "storylines": {
                "storylines": [
                    {
                        "id": "main_arc",
                        "name": "林枫问道",
                        "type": "main_arc",
                        "scope": "novel",
                        "pov_characters": ["林枫"],
                        "status": "active",
                        "introduced_volume": 1,
                        "description": "主角得玉入山、追查残玉来历的成长线",
                    }
                ],
                "relationships": [],
            },
            "changed_rule_ids": ["W-001", "W-002", "W-003"],
            "changelog": "初始化",
        },
        ensure_ascii=False,
    )


def _character(cid: str, name: str, role: str, key: str, rule: str) -> dict[str, Any]:
    return {
        "id": cid,
        "name": name,
        "role": role,
        "description": f"{name}，青石镇人",
        "goals": ["弄清残玉的来历"],
        "motivation": "想知道真相",
        "inner_conflict": "想要安稳，又忍不住追问",
        "speech_pattern": "直来直去",
        "status": "active",
        "contracts": [
            {
                "id": f"C-{key}-001",
                "type": "capability",
                "rule": rule,
                "valid_from_chapter": 1,
                "valid_until": None,
                "update_requires": "PlotArchitect 在大纲中标注引气入体事件",
            },
            {"id": f"C-{key}-002", "type": "personality", "rule": "遇事先问为什么", "valid_from_chapter": 1},
        ],
    }


def characters_json() -> str:
    return json.dumps(
        {
            "characters": [
                _character(
                    "lin-feng", "林枫", "protagonist", "LINFENG", "凡人，未引气入体，在青石镇不能修炼"
                ),
                _character("chen-lao", "陈老", "mentor", "CHENLAO", "隐居的修士，不在人前施法"),
            ],
            "relationships": [{"from": "lin-feng", "to": "chen-lao", "type": "依靠", "value": 60}],
            "changelog": "新增林枫、陈老",
        },
        ensure_ascii=False,
    )


def style_json() -> str:
    return json.dumps(
        {
            "avg_sentence_length": 99,  # the program's measured numbers replace these
            "dialogue_ratio": 0.9,
            "rhetoric_preferences": ["长句铺陈", "以景写人"],
            "forbidden_words": ["不禁"],
            "character_speech_patterns": {},
            "source_type": "original",
            "writing_directives": ["长句铺陈，景物里藏人物心事", "少用对话，用动作带出情绪"],
            "reference_author": None,
        },
        ensure_ascii=False,
    )


def plan_json(volume: int, start: int, end: int) -> str:
    """PlotArchitect's decision for chapters ``start``-``end`` (the chain of contracts left imperfect on
    purpose for chapter ``start + 1``: the program must fix its preconditions)."""
    sections, contracts = [], []
    for n in range(start, end + 1):
        sections.append(
            f"## 第 {n} 章 问心{n}\n- **Storyline**: main_arc\n- **POV**: 林枫\n- **Location**: 苍梧宗\n"
            f"- **Conflict**: 第{n}关考验\n- **Arc**: 林枫坚定问道之心\n- **Foreshadowing**: 推进 jade_origin\n"
            f"- **StateChanges**: 林枫过第{n}关"
        )
        contracts.append(
            {
                "chapter": n,
                "storyline_id": "main_arc",
                "preconditions": {
                    "character_states": {
                        "林枫": {"location": "苍梧宗", "关卡": n - 1 if n != start + 1 else 0}
                    },
                    "required_world_rules": ["W-001"],
                },
                "objectives": [
                    {
                        "id": f"OBJ-{n:03d}-1",
                        "type": "plot",
                        "required": True,
                        "description": f"林枫过第{n}关",
                    }
                ],
                "postconditions": {"state_changes": {"林枫": {"location": "苍梧宗", "关卡": n}}},
                "acceptance_criteria": [f"OBJ-{n:03d}-1 在正文中明确体现", "不违反 W-001"],
            }
        )
    data = {
        "outline": f"# 第{volume}卷 问心\n\n" + "\n\n".join(sections),
        "chapter_contracts": contracts,
        "storyline_schedule": {
            "volume": volume,
            "volume_theme": "问心",
            "active_storylines": [
                {
                    "storyline_id": "main_arc",
                    "volume_role": "primary",
                    "target_chapters": end - start + 1,
                    "arc_goal": "林枫入门",
                }
            ],
            "interleaving_pattern": {"strategy": "primary_dominant", "primary_max_consecutive": 10},
            "convergence_events": [],
            "dormant_storylines": [],
            "newly_activated": [],
        },
        "foreshadowing": {
            "volume": volume,
            "foreshadowing": [
                {
                    "id": f"trial_secret_{volume}",
                    "description": "问心阶的秘密",
                    "scope": "volume",
                    "status": "planned",
                    "target_resolve_range": [start, end],
                    "storyline_id": "main_arc",
                },
                {
                    "id": "jade_origin",
                    "description": "残玉的来历",
                    "scope": "novel",
                    "status": "planned",
                    "target_resolve_range": [end + 10, end + 40],
                    "storyline_id": "main_arc",
                },
            ],
        },
    }
    return json.dumps(
        {
            "type": "requires_user_decision",
            "recommendation": f"确认大纲：第{volume}卷以问心阶为主线",
            "options": ["确认大纲", "修改大纲", "调整章数"],
            "rationale": "主线单线推进",
            "data": data,
        },
        ensure_ascii=False,
    )


def audit_json(severity: str = "low") -> str:
    return json.dumps(
        {
            "findings": [
                {
                    "chapter": 7,
                    "severity": severity,
                    "type": "item",
                    "description": "考核木牌在第 7 章又被发了一次",
                    "evidence": "第 7 章摘要：执事发给考核木牌",
                    "suggestion": "把第 7 章的木牌改为通关玉符",
                }
            ]
        },
        ensure_ascii=False,
    )


def answers() -> dict[str, Any]:
    """An answers file for the whole path, keyed by topic (the same answer for every volume)."""
    return {
        "novel setup": {
            "genre": "仙侠",
            "protagonist": "林枫，青石镇药铺学徒，十七岁，父母早亡，倔强爱追问",
            "conflict": "林枫想弄清残玉的来历，却被挡在仙门之外",
            "platform": "起点中文网",
        },
        "quick start review": {"trial_action": "继续"},
        # What the agents invent is reviewed before it binds (接受 / 编辑 / 重新生成).
        "world review": {"review_action": "接受"},
        "characters review": {"review_action": "接受"},
        "storylines review": {"review_action": "接受"},
        "volume_plan review": {"review_action": "接受"},
        "volume plan": {"review_action": "接受"},
        "quality brief": {"brief_action": "继续"},
        # The review's proposed retirements and closures: the author keeps everything.
        "volume closures": {},
        "volume review": {"review_action": "确认", "chapter_count": "10"},
    }


def script_planning(server: Any) -> None:  # the fake server (tests.fakes.anthropic_server)
    """Every planning role answers well by default."""
    server.set_default("world_builder", world_json())
    server.set_default("character_weaver", characters_json())
    server.set_default("style_analyzer", style_json())
    server.set_default("consistency_auditor", audit_json())
