"""What ``packaging/`` ships: the PyInstaller spec, the launcher, the AppStream metadata and the icon."""

from __future__ import annotations

import ast
import configparser
import os
import shutil
import struct
import subprocess
import sys
import time
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from novel_desktop import paths

REPO = Path(__file__).resolve().parent.parent
PACKAGING = REPO / "packaging"
SPEC = PACKAGING / "novel-desktop.spec"
DESKTOP = PACKAGING / "novel-desktop.desktop"
METAINFO = PACKAGING / "io.github.novel_desktop.metainfo.xml"
ICON_SVG = PACKAGING / "icons" / "novel-desktop.svg"
ICON_PNG = PACKAGING / "icons" / "novel-desktop.png"
XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"


def _spec_value(name: str) -> object:
    """A literal assigned at the top of the spec (the spec itself only runs inside PyInstaller)."""
    for node in ast.parse(SPEC.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            return ast.literal_eval(node.value)
    raise AssertionError(f"{name} not assigned in {SPEC.name}")


def _pyproject() -> dict[str, object]:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def _bundled_dirs() -> list[tuple[str, str]]:
    value = _spec_value("BUNDLED_DIRS")
    assert isinstance(value, list)
    return [(str(src), str(dest)) for src, dest in value]


def test_spec_bundles_resources_and_prompts_where_paths_looks() -> None:
    bundled = dict(_bundled_dirs())
    assert bundled.get("resources") == paths.resources_dir().relative_to(paths.app_root()).as_posix()
    assert bundled.get("prompts") == paths.prompts_dir().relative_to(paths.app_root()).as_posix()
    for src in bundled:
        assert (REPO / src).is_dir(), src


def test_spec_data_resolves_through_paths_in_a_frozen_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Lay the folders out as PyInstaller does (each src copied to dest under _MEIPASS), then look them up
    # the way the frozen app does.
    bundle = tmp_path / "_internal"
    for src, dest in _bundled_dirs():
        shutil.copytree(REPO / src, bundle / dest)
    monkeypatch.setattr(sys, "_MEIPASS", str(bundle), raising=False)
    assert paths.app_root() == bundle
    assert paths.resource("ai_phrases.json").is_file()
    assert paths.resource("demo", "novel.json").is_file()
    assert (paths.prompts_dir() / "chapter_writer.md").is_file()
    # Every file the source tree has is found in the bundle under the same relative name.
    for src, dest in _bundled_dirs():
        for file in (REPO / src).rglob("*"):
            if file.is_file() and "__pycache__" not in file.parts:
                assert (bundle / dest / file.relative_to(REPO / src)).is_file()


def test_spec_bundles_the_word_segmenter_and_names_the_app() -> None:
    text = SPEC.read_text(encoding="utf-8")
    assert '    "rjieba",' in text  # a hidden import: analysis/segment.py imports it lazily
    assert '"novel_desktop" / "__main__.py"' in text
    assert 'name="novel-desktop"' in text
    assert "console=False" in text
    # rjieba's dictionary is compiled into its extension module: a bundle needs no data files for it.
    hooks = pytest.importorskip("PyInstaller.utils.hooks")
    rjieba_files = {Path(src).suffix for src, _dest in hooks.collect_data_files("rjieba")}
    assert not rjieba_files - {".pyi", ".typed"}


def test_spec_excludes_no_module_the_app_imports() -> None:
    excludes = _spec_value("EXCLUDES")
    assert isinstance(excludes, list) and "PySide6.QtWebEngineCore" in excludes
    imported = set()
    for file in (REPO / "novel_desktop").rglob("*.py"):
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module)
            elif isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names)
    assert "PySide6.QtCharts" in imported  # the quality panel's chart: a bundle without it cannot start
    assert sorted(m for m in imported if any(m == x or m.startswith(f"{x}.") for x in excludes)) == []


def test_desktop_file_has_the_required_keys() -> None:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # keys are case-sensitive
    parser.read(DESKTOP, encoding="utf-8")
    entry = parser["Desktop Entry"]
    assert entry["Type"] == "Application"
    assert entry["Name"] and entry["Name[zh_CN]"]
    assert entry["Comment"] and entry["Comment[zh_CN]"]
    categories = entry["Categories"].rstrip(";").split(";")
    assert {"Office", "TextTools"} <= set(categories)
    assert entry["Categories"].endswith(";")
    # The launcher runs the program the package installs and the bundle is named after.
    scripts = _pyproject()["project"]["gui-scripts"]
    binary = entry["Exec"].split()[0]
    assert binary in scripts
    assert f'name="{binary}"' in SPEC.read_text(encoding="utf-8")
    assert entry["Icon"] == ICON_PNG.stem
    assert entry["Terminal"] == "false"


def test_metainfo_has_the_required_elements() -> None:
    root = ET.parse(METAINFO).getroot()
    assert root.tag == "component" and root.get("type") == "desktop-application"
    assert root.findtext("id") == "io.github.novel_desktop"
    assert root.findtext("metadata_license") and root.findtext("project_license") == "MIT"
    names = {el.get(XML_LANG): el.text for el in root.findall("name")}
    assert names.get(None) and names.get("zh-CN")
    summaries = {el.get(XML_LANG): el.text for el in root.findall("summary")}
    assert summaries.get(None) and summaries.get("zh-CN")
    assert root.find("description/p") is not None
    launchable = root.find("launchable")
    assert launchable is not None and launchable.get("type") == "desktop-id"
    assert launchable.text == DESKTOP.name
    images = [el.text or "" for el in root.findall("screenshots/screenshot/image")]
    assert images and all("/docs/screenshots/" in i and i.endswith(".png") for i in images)
    for image in images:  # the screenshots the README shows, made by docs/make-screenshots.sh
        assert (REPO / "docs" / "screenshots" / image.rsplit("/", 1)[1]).is_file(), image
    assert len(root.findall("screenshots/screenshot[@type='default']")) == 1
    rating = root.find("content_rating")
    assert rating is not None and rating.get("type", "").startswith("oars-")
    releases = root.findall("releases/release")
    assert releases and releases[0].get("date")
    assert releases[0].get("version") == _pyproject()["project"]["version"]
    assert "novel-desktop" in [el.text for el in root.findall("provides/binary")]


def test_icon_exists_as_svg_and_256px_png() -> None:
    assert ET.parse(ICON_SVG).getroot().tag == "{http://www.w3.org/2000/svg}svg"
    header = ICON_PNG.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", header[16:24])
    assert (width, height) == (256, 256)


# ---------------------------------------------------------------------- the real bundle
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_built_bundle_starts(tmp_path: Path) -> None:
    """Build the bundle with PyInstaller (about a minute) and start it offscreen."""
    pytest.importorskip("PyInstaller")
    dist, work = tmp_path / "dist", tmp_path / "build"
    subprocess.run(
        [sys.executable, "-m", "PyInstaller", str(SPEC), "--noconfirm", "--log-level", "WARN",
         "--distpath", str(dist), "--workpath", str(work)],
        cwd=REPO, check=True, capture_output=True, timeout=840,
    )  # fmt: skip
    app_dir = dist / "novel-desktop"
    exe = app_dir / ("novel-desktop.exe" if sys.platform == "win32" else "novel-desktop")
    assert exe.is_file()
    internal = app_dir / "_internal"
    assert (internal / "resources" / "demo" / "novel.json").is_file()
    assert (internal / "prompts" / "chapter_writer.md").is_file()
    # The word segmenter's extension (its dictionary is compiled in).
    assert {p.suffix for p in (internal / "rjieba").glob("rjieba*")} & {".so", ".pyd"}

    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    if "--screenshot" in (REPO / "novel_desktop" / "app.py").read_text(encoding="utf-8"):
        # The bundled demo in the editor: the frozen app finds resources/, builds a novel and draws it.
        shot = tmp_path / "shot.png"
        done = subprocess.run(
            [str(exe), "--screenshot", str(shot), "--demo", "--view", "editor", "--size", "1200x800"],
            env=env, capture_output=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr.decode(errors="replace")
        header = shot.read_bytes()[:24]
        assert header[:8] == b"\x89PNG\r\n\x1a\n"
        assert struct.unpack(">II", header[16:24]) == (1200, 800)
        return
    # Until the app can take a screenshot and exit: it must come up and keep running.
    proc = subprocess.Popen([str(exe)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        time.sleep(6)
        assert proc.poll() is None, proc.communicate()[1].decode(errors="replace")
    finally:
        proc.kill()
        proc.wait(timeout=30)
