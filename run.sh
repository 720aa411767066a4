#!/usr/bin/env bash
# One entry point for a fresh machine (Debian/Ubuntu):
#   ./run.sh app     set up, then start the desktop application
#   ./run.sh test    set up, then run the whole test suite
#   ./run.sh setup   only set up (system libraries for Qt, a virtualenv in .venv, the package and its tools)
# Extra arguments after `app` or `test` are passed to novel-desktop or pytest.
# pip runs only when needed: .venv keeps a stamp of pyproject.toml and the Python version it was installed
# for; while both match, set-up is only the (fast) check of the system libraries. `./run.sh setup --force`
# reinstalls anyway.
set -euo pipefail
cd "$(dirname "$0")"

QT_DEBS=(libgl1 libegl1 libxkbcommon0 libglib2.0-0 libfontconfig1 libdbus-1-3
         libxkbcommon-x11-0 libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-shape0 fonts-wqy-microhei)
PYTHON=${PYTHON:-python3}

install_system_libraries() {
  command -v dpkg >/dev/null 2>&1 || return 0   # not Debian/Ubuntu: install Qt's libraries yourself
  local installed missing=()
  # One dpkg-query for all of them (a dpkg -s per package costs ~20 ms each).
  installed=$(dpkg-query -W -f='${db:Status-Status} ${Package}\n' "${QT_DEBS[@]}" 2>/dev/null || true)
  for pkg in "${QT_DEBS[@]}"; do
    [[ $'\n'"$installed"$'\n' == *$'\n'"installed $pkg"$'\n'* ]] || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "Installing system libraries for Qt: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

STAMP=.venv/.run-sh-installed

# What the installed packages depend on: pyproject.toml and the virtualenv's Python.
install_fingerprint() {
  { cat pyproject.toml; .venv/bin/python -c 'import sys; print(sys.version)'; } | sha256sum | cut -d' ' -f1
}

setup() {
  install_system_libraries
  if [ -x .venv/bin/python ] && [ "${1:-}" != "--force" ] && [ -f "$STAMP" ] \
     && [ "$(cat "$STAMP")" = "$(install_fingerprint)" ]; then
    return 0
  fi
  if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
  fi
  rm -f "$STAMP"
  .venv/bin/python -m pip install -q --upgrade pip >/dev/null
  .venv/bin/python -m pip install -q -e '.[dev]'
  install_fingerprint >"$STAMP"
}

cmd=${1:-app}
shift || true
case "$cmd" in
  setup) setup "$@" ;;
  app)   setup; exec .venv/bin/novel-desktop "$@" ;;
  test)  setup; QT_QPA_PLATFORM=${QT_QPA_PLATFORM:-offscreen} exec .venv/bin/python -m pytest "$@" ;;
  *) echo "usage: ./run.sh [app|test|setup] [args…]" >&2; exit 2 ;;
esac
