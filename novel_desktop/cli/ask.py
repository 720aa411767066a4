"""`novel ask` commands."""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:
    """Register this module's commands (filled in by its owner)."""
    _ = (subparsers, argparse)
