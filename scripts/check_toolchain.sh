#!/usr/bin/env bash
# Checks that the Rust toolchain is the one this workspace is pinned to
# (rust-toolchain.toml names the channel; this names the version) and that
# cargo fmt and cargo clippy exist. Another rustc version is an error under
# CI (CI set) or with --strict, a warning otherwise: clippy's lints and
# rustfmt's output change between versions, so `make verify` may disagree
# with CI.
set -euo pipefail
pinned="1.95.0"
strict=${CI:+yes}
[ "${1:-}" = --strict ] && strict=yes
cd "$(dirname "$0")/.."
if ! command -v cargo >/dev/null 2>&1 || ! command -v rustc >/dev/null 2>&1; then
  echo "toolchain: cargo/rustc not found on PATH: install Rust $pinned with rustup (https://rustup.rs)," \
    "e.g. rustup toolchain install $pinned --component rustfmt,clippy" >&2
  exit 1
fi
if ! found=$(rustc --version 2>&1); then
  echo "toolchain: rustc --version failed:" >&2
  echo "$found" >&2
  exit 1
fi
case "$found" in
  "rustc $pinned "*) ;;
  *)
    if [ -n "$strict" ]; then
      echo "toolchain: this workspace is pinned to rustc $pinned, found: $found" >&2
      echo "toolchain: install it (rustup toolchain install $pinned) and make it the stable one in use here" >&2
      exit 1
    fi
    echo "toolchain: warning: pinned to rustc $pinned, found: $found (fmt and clippy may disagree with CI)" >&2 ;;
esac
for tool in fmt clippy; do
  if ! cargo "$tool" --version >/dev/null 2>&1; then
    echo "toolchain: cargo $tool is missing: rustup component add $([ $tool = fmt ] && echo rustfmt || echo clippy)" >&2
    exit 1
  fi
done
echo "toolchain: $found, with rustfmt and clippy"
