"""Character contracts with a lifecycle (issue 14 item 4, seed 004 §6.5.3): only the versions in force for a
chapter reach its prompts, and a breakthrough the chapter contract marks updates the contract at commit."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from novel_desktop.cli import main
from novel_desktop.domain.characters import Character
from novel_desktop.domain.contract_lifecycle import (
    apply_contract_update,
    contract_history,
    contracts_in_force,
)
from novel_desktop.domain.contracts import ChapterContract, ContractUpdate
from novel_desktop.pipeline.rebuild import rebuild_from
from novel_desktop.storage.store import NovelStore
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.pipeline.scripted_agents import ScriptedAgents

LIN = "characters/active/lin-feng.json"
OLD_RULE = "凡人，尚未引气入体，不能使用任何法术"
NEW_RULE = "已引气入体，能用最基础的引火诀"
EXPIRED = "尚需陈老每日护送上山"
PLANNED = "入门后须守外门门规，不得擅入内门"


def _prepare(novel: Path) -> None:
    """林枫: one contract expired at chapter 2, one planned from chapter 9; chapter 3 marks a breakthrough."""
    with NovelStore.open(novel) as store:
        data = store.document_json(LIN)
        data["contracts"] += [
            {
                "id": "C-LINFENG-003",
                "type": "relationship",
                "rule": EXPIRED,
                "valid_from_chapter": 1,
                "valid_until": 2,
                "status": "established",
            },
            {
                "id": "C-LINFENG-004",
                "type": "rule",
                "rule": PLANNED,
                "valid_from_chapter": 9,
                "status": "planned",
            },
        ]
        store.put_document(LIN, json.dumps(data, ensure_ascii=False))
        contract = json.loads(store.document("volumes/vol-01/chapter-contracts/chapter-002.json") or "")
        contract["chapter"] = 3
        contract["contract_updates"] = [
            {"contract_id": "C-LINFENG-001", "rule": NEW_RULE, "note": "问心阶上残玉入体，引气成功"}
        ]
        store.put_document("volumes/vol-01/chapter-contracts/chapter-003.json", json.dumps(contract))


def _request_text(fake: FakeAnthropicServer, role: str, index: int = -1) -> str:
    return json.dumps(fake.requests_for(role)[index].body, ensure_ascii=False)


def test_only_contracts_in_force_reach_the_prompts_and_a_breakthrough_updates_at_commit(
    novel: Path, fake: FakeAnthropicServer, capsys: pytest.CaptureFixture[str]
) -> None:
    _prepare(novel)
    assert main(["continue", str(novel), "-n", "1", "--non-interactive"]) == 0

    for role in ("chapter_writer", "quality_judge"):
        sent = _request_text(fake, role)
        assert "C-LINFENG-002" in sent  # in force
        assert EXPIRED not in sent  # expired before chapter 3
        assert PLANNED not in sent  # planned from chapter 9
        # Chapter 3 is where the change happens: the writer and the judge see the old rule and the new one.
        assert OLD_RULE in sent and NEW_RULE in sent

    with NovelStore.open(novel, write=False) as store:
        character = Character.model_validate(store.document_json(LIN))
        changelog = store.document("characters/changelog.md") or ""
    versions = contract_history(character)["C-LINFENG-001"]
    assert [(v.version, v.status, v.valid_from_chapter, v.valid_until) for v in versions] == [
        (1, "deprecated", 1, 3),
        (2, "established", 4, None),
    ]
    assert versions[1].rule == NEW_RULE and versions[1].changed_in_chapter == 3
    assert "C-LINFENG-001" in changelog and "第 4 章起生效" in changelog

    # Chapter 4: the new version is in force, the old one is history.
    assert main(["continue", str(novel), "-n", "1", "--non-interactive"]) == 0
    for role in ("chapter_writer", "quality_judge"):
        sent = _request_text(fake, role)
        assert NEW_RULE in sent and OLD_RULE not in sent

    # Rebuilding chapter 3 gives the same contracts: no third version, no second changelog line.
    with NovelStore.open(novel) as store:
        store.save_manual_edit(3, (store.chapter_text(3) or "") + "\n\n　　补一句。")
        asyncio.run(rebuild_from(store, ScriptedAgents(), 3))
        again = Character.model_validate(store.document_json(LIN))
        assert again.contracts == character.contracts
        assert store.document("characters/changelog.md") == changelog


def test_the_plot_architect_reply_with_contract_updates_is_parsed() -> None:
    from novel_desktop.agents.planning import PlanReply

    template = (Path(__file__).parents[2] / "prompts" / "plot_architect.md").read_text(encoding="utf-8")
    example = template.split("```json\n", 1)[1].split("\n```", 1)[0]
    reply = PlanReply.model_validate_json(example)
    chapter7 = next(c for c in reply.plan().chapter_contracts if c.chapter == 7)
    assert chapter7.contract_updates == [
        ContractUpdate(
            contract_id="C-LINFENG-002",
            rule="对苏晚有了信任，遇事愿与她商量",
            type="relationship",
            note="苏晚替他遮掩，两人结识",
        )
    ]


def test_old_files_read_as_established_and_in_force_follows_the_range() -> None:
    ch = Character.model_validate(
        {
            "id": "lin-feng",
            "name": "林枫",
            "contracts": [
                {"id": "C-LINFENG-001", "type": "capability", "rule": "a", "valid_from_chapter": 1},
                {"id": "C-LINFENG-002", "type": "personality", "rule": "b", "valid_until": 4},
                {
                    "id": "C-LINFENG-003",
                    "type": "x",
                    "rule": "c",
                    "status": "planned",
                    "valid_from_chapter": 6,
                },
                {"id": "C-LINFENG-004", "type": "x", "rule": "d", "status": "planned"},
                {"id": "C-LINFENG-005", "type": "x", "rule": "e", "status": "deprecated"},
            ],
        }
    )
    assert ch.contracts[0].status == "established"
    assert "status" not in ch.contracts[0].to_json_dict()  # an old file is written back as it was
    assert [c.id[-1] for c in contracts_in_force(ch, 4)] == ["1", "2"]
    assert [c.id[-1] for c in contracts_in_force(ch, 5)] == ["1"]
    assert [c.id[-1] for c in contracts_in_force(ch, 6)] == ["1", "3"]
    raw = ch.to_json_dict()
    assert [c["id"][-1] for c in contracts_in_force(raw, 6)] == ["1", "3"]


def test_applying_an_update_twice_changes_nothing_and_a_changed_update_rewrites_that_version() -> None:
    ch = Character.model_validate(
        {"id": "a", "name": "甲", "contracts": [{"id": "C-A-001", "type": "capability", "rule": "旧"}]}
    )
    update = ContractUpdate(contract_id="C-A-001", rule="新")
    once, applied = apply_contract_update(ch, update, 5)
    assert applied.changed
    twice, again = apply_contract_update(once, update, 5)
    assert not again.changed and twice == once
    changed, _ = apply_contract_update(once, ContractUpdate(contract_id="C-A-001", rule="更新"), 5)
    assert [(c.version, c.rule) for c in changed.contracts] == [(1, "旧"), (2, "更新")]
    later, _ = apply_contract_update(changed, ContractUpdate(contract_id="C-A-001", rule="再变"), 9)
    assert [(c.version, c.status, c.valid_until) for c in later.contracts] == [
        (1, "deprecated", 5),
        (2, "deprecated", 9),
        (3, "established", None),
    ]
    missing, skipped = apply_contract_update(ch, ContractUpdate(contract_id="C-B-001", rule="x"), 5)
    assert missing == ch and not skipped.changed
    assert ChapterContract.model_validate({"chapter": 1}).contract_updates == []
