"""The cost ledger (schema 2's ``model_calls``): one row per model call, whatever it was for and however it
ended, and the novel's totals from it.

A call writes its row when its stream starts (status ``interrupted``: the input is billed from then on) and
completes it when it ends, so a process killed mid-call leaves an honest row. The novel's totals come from
here only; each chapter's pipeline log keeps its stage detail.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import func
from sqlmodel import Session, col, select

from novel_desktop.domain.common import iso_now
from novel_desktop.domain.ledger import CostReport, CostTotals, ModelCall
from novel_desktop.storage.repository import Repository
from novel_desktop.storage.tables import ModelCallRow

_SUMS = (
    func.count(col(ModelCallRow.id)),
    func.sum(ModelCallRow.input_tokens),
    func.sum(ModelCallRow.output_tokens),
    func.sum(ModelCallRow.cache_creation_input_tokens),
    func.sum(ModelCallRow.cache_read_input_tokens),
    func.sum(ModelCallRow.cost_usd),
)


def _totals(row: Iterable[Any]) -> CostTotals:
    calls, i, o, cw, cr, usd = row
    return CostTotals(
        int(calls or 0), int(i or 0), int(o or 0), int(cw or 0), int(cr or 0), float(usd or 0.0)
    )


def cost_total(s: Session) -> CostTotals:
    """The novel's total over every recorded call."""
    return _totals(s.exec(select(*_SUMS)).one())  # type: ignore[call-overload]


def _grouped(s: Session, key: Any) -> dict[Any, CostTotals]:
    rows = s.exec(select(key, *_SUMS).group_by(key))  # type: ignore[call-overload]
    return {row[0]: _totals(row[1:]) for row in rows}


class LedgerRepository(Repository):
    """Recording model calls and reading the novel's cost."""

    def record_model_call(self, call: ModelCall, row_id: int | None = None) -> int:
        """Write ``call`` as a new ledger row, or over row ``row_id`` (the row its start wrote); return the
        row's id. One short transaction."""
        with self._write() as s:
            row = s.get(ModelCallRow, row_id) if row_id is not None else None
            if row is None:
                row = ModelCallRow(created_at=call.created_at or iso_now())
            row.chapter = call.chapter
            row.role = call.role
            row.model = call.model
            row.purpose = call.purpose
            row.status = call.status
            row.input_tokens = call.input_tokens
            row.output_tokens = call.output_tokens
            row.cache_creation_input_tokens = call.cache_creation_input_tokens
            row.cache_read_input_tokens = call.cache_read_input_tokens
            row.cost_usd = round(call.cost_usd, 8)
            row.duration_ms = call.duration_ms
            row.attempts = call.attempts
            s.add(row)
            s.flush()
            assert row.id is not None
            return row.id

    def model_calls(self, chapter: int | None = None) -> list[ModelCall]:
        """The ledger's rows, oldest first (of one chapter when ``chapter`` is given)."""
        with self._read() as s:
            query = select(ModelCallRow).order_by(col(ModelCallRow.id))
            if chapter is not None:
                query = query.where(ModelCallRow.chapter == chapter)
            return [
                ModelCall(
                    role=r.role,
                    model=r.model,
                    purpose=r.purpose,
                    status=r.status,
                    chapter=r.chapter,
                    input_tokens=r.input_tokens,
                    output_tokens=r.output_tokens,
                    cache_creation_input_tokens=r.cache_creation_input_tokens,
                    cache_read_input_tokens=r.cache_read_input_tokens,
                    cost_usd=r.cost_usd,
                    duration_ms=r.duration_ms,
                    attempts=r.attempts,
                    created_at=r.created_at,
                )
                for r in s.exec(query)
            ]

    def cost_total(self) -> CostTotals:
        """The novel's tokens and cost over every model call (failed, cancelled and interrupted ones too)."""
        with self._read() as s:
            return cost_total(s)

    def chapter_costs(self) -> dict[int, CostTotals]:
        """Each chapter's tokens and cost (chapters with recorded calls only)."""
        with self._read() as s:
            return {n: t for n, t in _grouped(s, ModelCallRow.chapter).items() if n is not None}

    def cost_report(self) -> CostReport:
        """The novel's cost in total, per chapter (None: outside any chapter) and per purpose."""
        with self._read() as s:
            return CostReport(
                cost_total(s), _grouped(s, ModelCallRow.chapter), _grouped(s, ModelCallRow.purpose)
            )
