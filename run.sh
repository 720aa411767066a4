#!/usr/bin/env bash
# One entry point for a fresh machine (Debian/Ubuntu):
#   ./run.sh app     set up, then start the desktop application
#   ./run.sh test    set up, then run the whole test suite
#   ./run.sh setup   only set up (system libraries for Qt, a virtualenv in .venv, the package and its tools)
# Extra arguments after `app` or `test` are passed to novel-desktop or pytest.
set -euo pipefail
cd "$(dirname "$0")"

QT_DEBS=(libgl1 libegl1 libxkbcommon0 libglib2.0-0 libfontconfig1 libdbus-1-3
         libxkbcommon-x11-0 libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-shape0 fonts-wqy-microhei)
PYTHON=${PYTHON:-python3}

install_system_libraries() {
  command -v dpkg >/dev/null 2>&1 || return 0   # not Debian/Ubuntu: install Qt's libraries yourself
  local missing=()
  for pkg in "${QT_DEBS[@]}"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "Installing system libraries for Qt: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

setup() {
  install_system_libraries
  if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
  fi
  .venv/bin/python -m pip install -q --upgrade pip >/dev/null
  .venv/bin/python -m pip install -q -e '.[dev]'
}

cmd=${1:-app}
shift || true
case "$cmd" in
  setup) setup ;;
  app)   setup; exec .venv/bin/novel-desktop "$@" ;;
  test)  setup; QT_QPA_PLATFORM=${QT_QPA_PLATFORM:-offscreen} exec .venv/bin/python -m pytest "$@" ;;
  *) echo "usage: ./run.sh [app|test|setup] [args…]" >&2; exit 2 ;;
esac
