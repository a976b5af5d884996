#!/usr/bin/env bash
# Puts the packages the primlab Python package's tests need (numpy, pytest)
# into .pydeps/, for `make verify` (PYTHONPATH=python:.pydeps). Like
# scripts/install_nvrtc.sh: `pip --target` into a new folder that replaces
# .pydeps/ only once complete (Debian's "externally managed" Python allows
# it), and a stamp naming the requirements, so a second run installs nothing.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/.pydeps"
requirements=("numpy>=1.24" "pytest>=7.4")
stamp="$dest/.installed-$(printf '%s\n' "${requirements[@]}" | sha256sum | cut -c1-16)"
if [ -f "$stamp" ]; then
  exit 0
fi
if ! command -v python3 >/dev/null 2>&1 || ! python3 -m pip --version >/dev/null 2>&1; then
  echo "install_python_test_deps: python3 with pip is needed; run scripts/install_system_deps.sh" >&2
  exit 1
fi
staging="$root/.pydeps.installing-$$"
trap 'rm -rf "$staging"' EXIT
echo "install_python_test_deps: installing ${requirements[*]} into .pydeps/" >&2
if ! PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet --disable-pip-version-check \
  --no-warn-script-location --target "$staging" "${requirements[@]}" >&2; then
  echo "install_python_test_deps: pip could not install ${requirements[*]} (above)" >&2
  exit 1
fi
touch "$staging/$(basename "$stamp")"
rm -rf "$dest"
mv "$staging" "$dest"
trap - EXIT
