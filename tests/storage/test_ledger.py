"""The cost ledger (schema 2's model_calls): rows written at a call's start and completed at its end, totals
per novel, chapter and purpose, and an old file's costs carried over by the upgrade."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from novel_desktop.domain.ledger import (
    BEFORE_LEDGER,
    DISCARDED_DRAFT,
    WRITE_AHEAD,
    Label,
    ModelCall,
    attributed,
    current_attribution,
)
from novel_desktop.storage.store import NovelStore


def test_a_call_row_is_completed_in_place_and_counted_once(store: NovelStore) -> None:
    started = ModelCall("chapter_writer", "m", "write", "interrupted", 3, input_tokens=100, cost_usd=0.01)
    row = store.record_model_call(started)
    assert store.cost_total().calls == 1 and store.model_calls()[0].status == "interrupted"
    done = ModelCall(
        "chapter_writer", "m", "write", "ok", 3, input_tokens=100, output_tokens=50, cost_usd=0.02
    )
    assert store.record_model_call(done, row) == row
    store.record_model_call(ModelCall("world_builder", "m", "plan", input_tokens=10, cost_usd=0.005))
    total = store.cost_total()
    assert (total.calls, total.input_tokens, total.output_tokens) == (2, 110, 50)
    assert round(total.cost_usd, 6) == 0.025
    report = store.cost_report()
    assert round(report.by_chapter[3].cost_usd, 6) == 0.02 and report.by_chapter[None].calls == 1
    assert set(report.by_purpose) == {"write", "plan"}
    assert store.chapter_costs() == {3: report.by_chapter[3]}
    assert store.status().cost == total


def test_an_early_drafts_rows_take_the_purpose_it_ends_with(store: NovelStore) -> None:
    label = Label(WRITE_AHEAD)
    with attributed(label, chapter=4), attributed(chapter=4):  # the writer's own block inherits the label
        assert current_attribution().purpose_now == WRITE_AHEAD
        label.value = DISCARDED_DRAFT  # thrown away while the call runs: its end row says so
        assert current_attribution().purpose_now == DISCARDED_DRAFT
    store.record_model_call(ModelCall("chapter_writer", "m", WRITE_AHEAD, "ok", 4, cost_usd=0.03))
    store.record_model_call(ModelCall("chapter_writer", "m", WRITE_AHEAD, "ok", 5, cost_usd=0.02))
    store.record_model_call(ModelCall("chapter_writer", "m", "write", "ok", 4, cost_usd=0.03))
    assert store.relabel_calls(4, WRITE_AHEAD, DISCARDED_DRAFT) == 1
    assert [(c.chapter, c.purpose) for c in store.model_calls()] == [
        (4, DISCARDED_DRAFT),
        (5, WRITE_AHEAD),
        (4, "write"),
    ]
    assert store.cost_report().by_purpose[DISCARDED_DRAFT].cost_usd == 0.03


def test_a_schema_1_file_keeps_its_total_cost_after_the_upgrade(tmp_path: Path) -> None:
    path = tmp_path / "old.novel"
    NovelStore.create(path, title="旧书").close()
    log1 = {
        "stages": [
            {"name": "draft", "input_tokens": 1000, "output_tokens": 3000, "cost_usd": 0.05},
            {"name": "judge", "input_tokens": 4000, "output_tokens": 500, "cache_read_input_tokens": 800,
             "cost_usd": 0.02},
        ],
        "total_cost_usd": 0.07,
    }  # fmt: skip
    log2 = {"stages": [{"name": "draft", "input_tokens": 900, "output_tokens": 2800, "cost_usd": 0.04}]}
    planning = {"world_builder": 0.03, "input_tokens": 2000, "output_tokens": 1500, "cost_usd": 0.03}
    con = sqlite3.connect(path)  # make it what schema 1's program wrote
    con.executescript(
        "DROP TRIGGER documents_history_insert; DROP TRIGGER documents_history_update;"
        "DROP TRIGGER documents_history_delete; DROP TABLE document_history; DROP TABLE chapter_points;"
        "DROP TABLE model_calls; DROP TABLE archived_chapters; ALTER TABLE chapters DROP COLUMN source_hash;"
        "UPDATE meta SET value = '1' WHERE key = 'schema_version';"
    )
    con.execute(
        "INSERT INTO pipeline_logs(chapter, content, total_cost_usd, updated_at) VALUES (1, ?, 0.07, ''),"
        " (2, ?, NULL, '')",
        (json.dumps(log1), json.dumps(log2)),
    )
    con.execute("INSERT INTO meta(key, value) VALUES ('planning_usage', ?)", (json.dumps(planning),))
    con.commit()
    con.close()
    with NovelStore.open(path) as store:
        assert store.meta()["schema_version"] == "2"
        total = store.cost_total()
        assert round(total.cost_usd, 6) == 0.14  # 0.07 + 0.04 + 0.03: nothing lost, nothing counted twice
        assert (total.input_tokens, total.output_tokens) == (
            1000 + 4000 + 900 + 2000,
            3000 + 500 + 2800 + 1500,
        )
        assert total.cache_read_input_tokens == 800
        report = store.cost_report()
        assert set(report.by_purpose) == {BEFORE_LEDGER}
        assert round(report.by_chapter[1].cost_usd, 6) == 0.07
        assert round(report.by_chapter[None].cost_usd, 6) == 0.03
        assert "planning_usage" not in store.meta()  # the ledger is the one place now
