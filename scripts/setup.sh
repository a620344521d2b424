#!/usr/bin/env bash
# Set up a fresh Debian machine for gpuarray: a Vulkan driver (Mesa's lavapipe when no
# driver is present and we may install it), a virtualenv in .venv, and the package with
# its test extras. Sourced by scripts/demo.sh and scripts/test.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

have_vulkan_driver() {   # an installed Vulkan ICD manifest in any of the standard places
  local d
  for d in /usr/share/vulkan/icd.d /etc/vulkan/icd.d /usr/local/share/vulkan/icd.d; do
    compgen -G "$d/*.json" >/dev/null && return 0
  done
  return 1
}

if ! have_vulkan_driver || ! ldconfig -p 2>/dev/null | grep libvulkan.so.1 >/dev/null; then
  echo "setup: no Vulkan driver found; installing Mesa's software driver (mesa-vulkan-drivers)"
  if [ "$(id -u)" = 0 ]; then SUDO=""; elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then SUDO="sudo"; else SUDO="none"; fi
  if [ "$SUDO" = none ] || ! command -v apt-get >/dev/null; then
    echo "setup: cannot install mesa-vulkan-drivers here (need root and apt-get); the wgpu provider will not start"
  else
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq mesa-vulkan-drivers libvulkan1 >/dev/null
  fi
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  if ! "$PY" -m venv .venv 2>/dev/null; then
    echo "setup: python3 -m venv failed; installing python3-venv"
    rm -rf .venv
    if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null
    else sudo -n apt-get update -qq && sudo -n apt-get install -y -qq python3-venv >/dev/null; fi
    "$PY" -m venv .venv
  fi
fi
.venv/bin/python -m pip install -q --upgrade pip >/dev/null 2>&1 || true
.venv/bin/python -m pip install -q -e ".[test${EXTRAS:+,$EXTRAS}]"
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
