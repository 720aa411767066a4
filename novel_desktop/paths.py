"""Where the program finds its own files and keeps the user's.

``resources/`` and ``prompts/`` are located only through this module, so the source tree, an installed
package and a frozen (PyInstaller) build all find them the same way.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def app_root() -> Path:
    """The folder that holds ``resources/`` and ``prompts/``."""
    frozen_root = getattr(sys, "_MEIPASS", None)
    if frozen_root:
        return Path(frozen_root)
    return _SOURCE_ROOT


# Resolved once: every prompt template load asks for it, and resolving walks the path (a stat per folder).
_SOURCE_ROOT = Path(__file__).resolve().parent.parent


def resources_dir() -> Path:
    return app_root() / "resources"


def prompts_dir() -> Path:
    return app_root() / "prompts"


def resource(*parts: str) -> Path:
    """A file under ``resources/``."""
    return resources_dir().joinpath(*parts)


def user_config_dir() -> Path:
    """Settings (never secrets): ``$NOVEL_DESKTOP_CONFIG_DIR``, else the XDG config folder."""
    override = os.environ.get("NOVEL_DESKTOP_CONFIG_DIR")
    if override:
        return Path(override)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "novel-desktop"


def user_data_dir() -> Path:
    """Caches and the recent-novels list: ``$NOVEL_DESKTOP_DATA_DIR``, else the XDG data folder."""
    override = os.environ.get("NOVEL_DESKTOP_DATA_DIR")
    if override:
        return Path(override)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "novel-desktop"
