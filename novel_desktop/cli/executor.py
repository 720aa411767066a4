"""`novel` executor commands (filled in by their owner)."""

from __future__ import annotations

from typing import Any


def register(subparsers: Any) -> None:
    """Register this module's commands."""
    _ = subparsers
