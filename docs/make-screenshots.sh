#!/usr/bin/env bash
# Re-make the README's screenshots: every view of a fresh copy of the demo novel, offscreen, 1600x1000, in
# Chinese (docs/screenshots/<view>.png) and English (<view>.en.png). One command:
#   docs/make-screenshots.sh            (after ./run.sh setup; needs fonts-wqy-microhei or Noto CJK for 汉字)
set -euo pipefail
cd "$(dirname "$0")/.."
out=docs/screenshots
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export QT_QPA_PLATFORM=offscreen NOVEL_DESKTOP_CONFIG_DIR="$tmp/config" NOVEL_DESKTOP_DATA_DIR="$tmp/data"
.venv/bin/novel demo "$tmp/demo.novel" >/dev/null
mkdir -p "$out"
shot() { .venv/bin/novel-desktop --screenshot "$@" --size 1600x1000; }
for lang in zh en; do
  suffix=""
  [ "$lang" = en ] && suffix=".en"
  # The start page as a newcomer first sees it (no novel open), then with the demo open.
  shot "$out/start$suffix.png" --view start --lang "$lang"
  for view in start editor outline storylines foreshadowing quality analytics settings; do
    name=$view
    [ "$view" = start ] && name=start-demo
    shot "$out/$name$suffix.png" --project "$tmp/demo.novel" --view "$view" --lang "$lang"
  done
done
ls -l "$out"
