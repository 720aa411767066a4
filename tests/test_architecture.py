"""The layering of ARCHITECTURE.md, enforced on the source: which package may import which, where the model
client, the agents and database sessions are built, how big a file may grow, and that no coroutine opens a
nested event loop. docs/architecture.md draws the same picture."""

from __future__ import annotations

import ast
import pkgutil
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import novel_desktop

ROOT = Path(novel_desktop.__file__).parent
CORE = ("domain", "storage", "llm", "agents", "analysis", "pipeline")

#: Base modules every layer may use: translation, resource paths, settings locations.
BASE = {"i18n", "paths", "config", "crash"}

#: What each package (or top-level module) may import from novel_desktop, besides itself and BASE.
#: domain ← storage, llm ← analysis ← agents ← pipeline ← session ← controllers ← ui; entry points on top.
ALLOWED: dict[str, set[str]] = {
    "domain": set(),
    "storage": {"domain"},
    "llm": {"domain"},
    "analysis": {"domain", "storage"},
    "agents": {"domain", "storage", "llm", "analysis"},
    "pipeline": {"domain", "storage", "llm", "analysis", "agents"},
    "demo": {"domain", "storage"},
    "session": {"domain", "storage", "llm", "analysis", "agents", "pipeline"},
    "controllers": {"domain", "storage", "llm", "analysis", "agents", "pipeline", "session", "demo"},
    "ui": {"domain", "controllers"},
    "cli": {"domain", "storage", "llm", "analysis", "agents", "pipeline", "session", "demo"},
    "app": {"domain", "controllers", "ui", "demo"},
    "__main__": {"app"},
    "__init__": set(),
    **{name: set() for name in BASE},
}

#: Only these may talk to the model: the agents, and the composition root that builds the client.
MODEL_MODULES = ("novel_desktop.llm.client", "novel_desktop.llm.structured", "novel_desktop.llm.batches")
MODEL_CALLERS = {"agents", "session", "llm"}

MAX_LINES = 600


@dataclass(frozen=True)
class Import:
    source: Path
    line: int
    target: str


def _unit(path: Path) -> str:
    """The layer a file belongs to: its top package, or its module name for a top-level module."""
    rel = path.relative_to(ROOT)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def _sources() -> list[Path]:
    return sorted(ROOT.rglob("*.py"))


def _imports(path: Path, source: str | None = None) -> Iterator[Import]:
    """Every novel_desktop import in a file, TYPE_CHECKING and function-level imports included."""
    rel = path.relative_to(ROOT)
    package = ["novel_desktop", *rel.parts[:-1]]
    text = path.read_text(encoding="utf-8") if source is None else source
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            for name in [module, *(f"{module}.{alias.name}" for alias in node.names)]:
                if name.startswith("novel_desktop"):
                    yield Import(path, node.lineno, name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("novel_desktop"):
                    yield Import(path, node.lineno, alias.name)


def _target_unit(module: str) -> str | None:
    parts = module.split(".")
    if len(parts) < 2:
        return None
    return parts[1]


def _where(imp: Import) -> str:
    return f"{imp.source.relative_to(ROOT.parent)}:{imp.line} imports {imp.target}"


def test_every_unit_has_a_place_in_the_layers() -> None:
    units = {_unit(path) for path in _sources()}
    assert units <= set(ALLOWED), f"not placed in ALLOWED: {sorted(units - set(ALLOWED))}"


def test_imports_point_down_the_layers() -> None:
    wrong = []
    known = {path.stem for path in ROOT.glob("*.py")} | {p.name for p in ROOT.iterdir() if p.is_dir()}
    for path in _sources():
        unit = _unit(path)
        for imp in _imports(path):
            target = _target_unit(imp.target)
            if target is None or target == unit or target in BASE or target not in known:
                continue
            if target not in ALLOWED[unit]:
                wrong.append(_where(imp))
    assert wrong == [], "imports against the layers:\n" + "\n".join(sorted(set(wrong)))


def test_only_agents_call_the_model() -> None:
    wrong = [
        _where(imp)
        for path in _sources()
        if _unit(path) not in MODEL_CALLERS
        for imp in _imports(path)
        if imp.target.startswith(MODEL_MODULES)
    ]
    assert wrong == [], "model calls outside agents/:\n" + "\n".join(sorted(set(wrong)))


def _constructions(name: str) -> dict[str, int]:
    pattern = re.compile(rf"\b{name}\(")
    found: dict[str, int] = {}
    for path in _sources():
        text = path.read_text(encoding="utf-8")
        hits = [
            line
            for line in text.splitlines()
            if pattern.search(line) and not line.lstrip().startswith("class ")
        ]
        if hits:
            found[str(path.relative_to(ROOT.parent))] = len(hits)
    return found


def test_the_composition_root_alone_builds_the_client_the_agents_and_the_interaction_manager() -> None:
    built = {
        name: {where for where in _constructions(name) if not where.startswith(f"novel_desktop/{home}/")}
        for name, home in (
            ("LLMClient", "llm"),
            ("LLMChapterAgents", "agents"),
            ("LLMPlanningAgents", "agents"),
            ("InteractionManager", "pipeline"),
        )
    }
    assert built == {name: {"novel_desktop/session.py"} for name in built}


def test_storage_owns_every_database_session() -> None:
    pattern = re.compile(
        r"\bSession\(|\bcreate_engine\(|\bmake_engine\b|\.engine\b|^\s*(from|import) sqlalchemy|"
        r"^\s*from sqlmodel import .*\bSession\b"
    )
    wrong = []
    for path in _sources():
        if _unit(path) == "storage":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line):
                wrong.append(f"{path.relative_to(ROOT.parent)}:{number}: {line.strip()}")
    assert wrong == [], "database sessions outside storage/:\n" + "\n".join(wrong)


def test_no_file_is_over_the_size_limit() -> None:
    big = {
        str(path.relative_to(ROOT.parent)): n
        for path in _sources()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert big == {}, f"files over {MAX_LINES} lines: {big}"


_NESTED_LOOP = re.compile(
    r"\.exec\(\)|\bexec_\(|QMessageBox\.(critical|warning|information|question|about)\(|"
    r"QInputDialog\.get|QFileDialog\.get"
)


def _async_functions(tree: ast.AST) -> Iterator[ast.AsyncFunctionDef]:
    for node in ast.walk(tree):
        if isinstance(node, ast.AsyncFunctionDef):
            yield node


def test_no_coroutine_opens_a_nested_event_loop() -> None:
    """A modal exec() or a QMessageBox static inside a coroutine running on qasync hangs the app ("Cannot
    enter into task …"): dialogs are opened with open() and answered through a future."""
    wrong = []
    for path in _sources():
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        for fn in _async_functions(ast.parse(source)):
            for number in range(fn.lineno, (fn.end_lineno or fn.lineno) + 1):
                if _NESTED_LOOP.search(lines[number - 1]):
                    wrong.append(f"{path.relative_to(ROOT.parent)}:{number}: {lines[number - 1].strip()}")
    assert wrong == [], "nested event loops in coroutines:\n" + "\n".join(wrong)


def test_message_boxes_go_through_the_alerts_module() -> None:
    pattern = re.compile(r"QMessageBox\.(critical|warning|information|question|about)\(")
    wrong = [
        str(path.relative_to(ROOT.parent))
        for path in _sources()
        if path.name != "alerts.py" and pattern.search(path.read_text(encoding="utf-8"))
    ]
    assert wrong == []


def _core_modules() -> list[str]:
    names = []
    for package in CORE:
        names.append(f"novel_desktop.{package}")
        for info in pkgutil.walk_packages([str(ROOT / package)], prefix=f"novel_desktop.{package}."):
            names.append(info.name)
    return names


def test_core_imports_without_qt() -> None:
    modules = [*_core_modules(), "novel_desktop.session", "novel_desktop.i18n"]
    assert "novel_desktop.storage.store" in modules
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6', 'qasync'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_cli_starts_without_qt() -> None:
    code = (
        "import sys\n"
        "from novel_desktop.cli import build_parser\n"
        "build_parser()\n"
        "print(any(m.startswith('PySide6') for m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from novel_desktop.storage.store import NovelStore\n", "storage"),
        ("from novel_desktop.storage import store\n", "storage"),
        ("import novel_desktop.llm.client\n", "llm"),
        ("from ..pipeline import events\n", "pipeline"),
        ("if TYPE_CHECKING:\n    from novel_desktop.agents.context import NovelFacts\n", "agents"),
    ],
)
def test_the_checker_sees_imports(source: str, expected: str) -> None:
    """The checks above cannot pass vacuously: the import reader finds every form of import."""
    probe = ROOT / "ui" / "probe.py"
    targets = {_target_unit(imp.target) for imp in _imports(probe, source)}
    assert expected in targets
    assert expected not in ALLOWED["ui"]
