#!/usr/bin/env bash
# Installs the system packages a fresh Debian/Ubuntu machine lacks for this
# workspace: m4 (rug's bundled GMP/MPFR build stops without it), a C
# toolchain, make, and Python 3 with pip (scripts/install_nvrtc.sh installs
# NVRTC from its wheel with pip). Never needs a GPU.
#
# Only what is missing is installed, so a second run changes nothing. apt-get
# needs root: as root it runs directly; otherwise through `sudo -n` when this
# user may use sudo without a password, or plain `sudo` when a person is at
# the terminal to type one (not under CI). Failing those it installs nothing
# and stops with the exact command to run.
set -euo pipefail

say() { echo "system packages: $*"; }

have_pip() { command -v python3 >/dev/null 2>&1 && python3 -m pip --version >/dev/null 2>&1; }

# The packages whose commands are missing, in `missing`.
check() {
  missing=()
  command -v m4 >/dev/null 2>&1 || missing+=(m4)
  command -v cc >/dev/null 2>&1 || missing+=(gcc)
  command -v make >/dev/null 2>&1 || missing+=(make)
  if ! command -v python3 >/dev/null 2>&1; then
    missing+=(python3 python3-pip)
  elif ! have_pip; then
    missing+=(python3-pip)
  fi
}

if command -v python3 >/dev/null 2>&1 && ! have_pip; then
  # pip bundled with Python itself needs no root; Debian's own python3
  # disables ensurepip, and then apt's python3-pip is the way.
  say "python3 has no pip; trying python3 -m ensurepip --user"
  python3 -m ensurepip --user >/dev/null 2>&1 || true
fi
check

if [ ${#missing[@]} -eq 0 ]; then
  say "all present (m4, cc, make, python3 with pip)"
  exit 0
fi

command_line="apt-get install ${missing[*]}"
if ! command -v apt-get >/dev/null 2>&1; then
  say "missing: ${missing[*]}, and this machine has no apt-get."
  say "install them with your package manager (Debian/Ubuntu: $command_line), then run make again."
  exit 1
fi

as_root=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    as_root=(sudo -n)
  elif command -v sudo >/dev/null 2>&1 && [ -t 0 ] && [ -z "${CI:-}" ]; then
    say "sudo will ask for your password to run: $command_line"
    as_root=(sudo)
  else
    why="this user is not root and has no sudo"
    command -v sudo >/dev/null 2>&1 && why="this user is not root and sudo needs a password (no terminal to type it)"
    say "missing: ${missing[*]}; $why."
    say "install them as root, then run make again:"
    echo "    $command_line"
    exit 1
  fi
fi

say "installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
if ! "${as_root[@]}" apt-get update -qq || ! "${as_root[@]}" apt-get install -y -qq "${missing[@]}"; then
  say "apt-get failed (above); install them yourself, then run make again:"
  echo "    $command_line"
  exit 1
fi
installed=("${missing[@]}")
check
if [ ${#missing[@]} -ne 0 ]; then
  say "installed ${installed[*]}, but still missing: ${missing[*]}"
  case " ${missing[*]} " in *" python3-pip "*)
    say "python3 is $(command -v python3 || echo absent); Debian's python3-pip serves /usr/bin/python3 only:" \
      "give this python3 a pip (python3 -m ensurepip --user) or put /usr/bin first on PATH" ;;
  esac
  exit 1
fi
say "installed ${installed[*]}"
