# primlab: the two commands that do everything on a fresh machine are
#   make sweep    (installs what is missing, then `cargo run -p harness -- sweep`)
#   make verify   (format, clippy -D warnings, every test, docs, examples, fixture drift, receipt gate)
# GPU-machine targets (sanitize, mutants, bench) need a built binary and a GPU.

# The version scripts/install_nvrtc.sh installs (named there once).
NVRTC_VERSION := $(shell sed -n 's/^version="\(.*\)"$$/\1/p' scripts/install_nvrtc.sh)
NVRTC_LIB := $(CURDIR)/.nvrtc/nvidia/cu13/lib
# Present once scripts/install_nvrtc.sh has completed an install.
NVRTC_STAMP := .nvrtc/.version-$(NVRTC_VERSION)
export LD_LIBRARY_PATH := $(NVRTC_LIB)$(if $(LD_LIBRARY_PATH),:$(LD_LIBRARY_PATH),)
HARNESS := target/release/harness

# Runs one named step: prints it, and on failure says which step failed
# (instead of make's bare "Error 1") and stops.
define step
	@echo "==> $(1)"; $(2) || { rc=$$?; echo "make $@: FAILED at step '$(1)' (exit $$rc): $(2)" >&2; exit $$rc; }
endef

.PHONY: setup system-deps toolchain verify sweep sanitize mutants bench report fixtures gpu-receipts build-release

# Set-up, each part once per make run: system packages and the toolchain are
# checks that install nothing when all is there; NVRTC is installed only
# while its stamp is missing.
setup: system-deps toolchain $(NVRTC_STAMP)

system-deps:
	$(call step,setup: system packages,scripts/install_system_deps.sh)

toolchain:
	$(call step,setup: Rust toolchain,scripts/check_toolchain.sh)

$(NVRTC_STAMP): | system-deps
	$(call step,setup: NVRTC $(NVRTC_VERSION),scripts/install_nvrtc.sh >/dev/null)

verify: setup
	$(call step,verify: format,cargo fmt --all -- --check)
	$(call step,verify: clippy,cargo clippy --workspace --all-targets -- -D warnings)
	$(call step,verify: tests,cargo test --workspace)
	$(call step,verify: docs,RUSTDOCFLAGS='-D warnings' cargo doc --workspace --no-deps)
	$(call step,verify: examples,cargo build --examples -p kernels)
	$(call step,verify: fixture drift,cargo run -q -p harness -- fixtures --check)
	$(call step,verify: receipt gate,cargo run -q -p harness -- receipts check)
	@echo "make verify: every step passed"

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
	$(HARNESS) sweep --require-gpu --receipt receipts/sweep.json && $(HARNESS) sanitize && $(HARNESS) mutants
