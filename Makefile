# primlab: the two commands that do everything on a fresh machine are
#   make sweep    (installs what is missing, then `cargo run -p harness -- sweep`)
#   make verify   (format, clippy -D warnings, every test, fixture drift, receipt gate)
# GPU-machine targets (sanitize, mutants, bench) need a built binary and a GPU.

NVRTC_LIB := $(CURDIR)/.nvrtc/nvidia/cu13/lib
export LD_LIBRARY_PATH := $(NVRTC_LIB)$(if $(LD_LIBRARY_PATH),:$(LD_LIBRARY_PATH),)
HARNESS := target/release/harness

.PHONY: setup verify sweep sanitize mutants bench report fixtures gpu-receipts build-release

setup:
	@scripts/install_system_deps.sh
	@scripts/install_nvrtc.sh >/dev/null
	@command -v cargo >/dev/null || { echo "cargo not found: install Rust (https://rustup.rs)"; exit 1; }
	@cargo fmt --version >/dev/null 2>&1 || rustup component add rustfmt
	@cargo clippy --version >/dev/null 2>&1 || rustup component add clippy

verify: setup
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -- -D warnings
	cargo test --workspace
	cargo run -q -p harness -- fixtures --check
	cargo run -q -p harness -- receipts check

sweep: setup
	cargo run -p harness -- sweep

fixtures: setup
	cargo run -p harness -- fixtures

report: setup
	cargo run --release -p harness -- report

build-release: setup
	cargo build --release -p harness

# On a GPU machine (the binary is built elsewhere and carried over):
sanitize:
	$(HARNESS) sanitize

mutants:
	$(HARNESS) mutants

bench:
	$(HARNESS) bench

gpu-receipts:
	$(HARNESS) sweep --json receipts/sweep.json && $(HARNESS) sanitize
