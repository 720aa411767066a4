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


# The same sums as plain SQL (the window asks for the totals after every call and commit).
_SUMS_SQL = (
    "COUNT(id), SUM(input_tokens), SUM(output_tokens), SUM(cache_creation_input_tokens),"
    " SUM(cache_read_input_tokens), SUM(cost_usd)"
)
_COLUMNS = (
    "chapter, role, model, purpose, status, input_tokens, output_tokens, cache_creation_input_tokens,"
    " cache_read_input_tokens, cost_usd, duration_ms, attempts"
)
_COLUMNS_SET = ", ".join(f"{name.strip()} = ?" for name in _COLUMNS.split(","))


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
        row's id. One short transaction, plain SQL (every model call writes twice, on the window's turn)."""
        values = (
            call.chapter,
            call.role,
            call.model,
            call.purpose,
            call.status,
            call.input_tokens,
            call.output_tokens,
            call.cache_creation_input_tokens,
            call.cache_read_input_tokens,
            round(call.cost_usd, 8),
            call.duration_ms,
            call.attempts,
        )
        with self._raw_write() as cur:
            if row_id is not None:
                cur.execute(f"UPDATE model_calls SET {_COLUMNS_SET} WHERE id = ?", (*values, row_id))
                if cur.rowcount:
                    return row_id
            cur.execute(
                f"INSERT INTO model_calls (created_at, {_COLUMNS}) VALUES (?{', ?' * len(values)})",
                (call.created_at or iso_now(), *values),
            )
            return int(cur.lastrowid)

    def relabel_calls(self, chapter: int, purpose: str, to: str) -> int:
        """Give chapter ``chapter``'s rows of purpose ``purpose`` the purpose ``to`` (an early draft adopted
        or thrown away); return how many rows changed."""
        with self._raw_write() as cur:
            cur.execute(
                "UPDATE model_calls SET purpose = ? WHERE chapter = ? AND purpose = ?", (to, chapter, purpose)
            )
            return int(cur.rowcount)

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
        return _totals(self._rows(f"SELECT {_SUMS_SQL} FROM model_calls")[0])

    def chapter_costs(self, purpose: str | None = None) -> dict[int, CostTotals]:
        """Each chapter's tokens and cost (chapters with recorded calls only); of one purpose's calls when
        ``purpose`` is given."""
        where = "chapter IS NOT NULL" + (" AND purpose = ?" if purpose is not None else "")
        rows = self._rows(
            f"SELECT chapter, {_SUMS_SQL} FROM model_calls WHERE {where} GROUP BY chapter",
            () if purpose is None else (purpose,),
        )
        return {int(row[0]): _totals(row[1:]) for row in rows}

    def cost_report(self) -> CostReport:
        """The novel's cost in total, per chapter (None: outside any chapter) and per purpose."""
        with self._read() as s:
            return CostReport(
                cost_total(s), _grouped(s, ModelCallRow.chapter), _grouped(s, ModelCallRow.purpose)
            )
