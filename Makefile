# Strata: the two commands.
#   make run   set up what is missing, build, and open the desktop app on its embedded defaults
#   make test  the whole suite: formatting, lints (as the tests build), every test
# Other targets: make setup, make models (the default chat models), make ui, make clippy (lints
# alone; `make test` lints as it builds), make bench, make fmt, make aarch64 (strata-core and
# strata-models built for aarch64 Linux, their tests run under qemu; CI runs it after `make test`).

CARGO ?= cargo
STRATA := $(CARGO) run --quiet --release -p strata-cli --bin strata --
TARGET_DIR := $(or $(CARGO_TARGET_DIR),target)

# Lints and tests from one build: clippy's driver compiles the workspace's own crates while it
# lints them (every target, warnings denied, clippy.toml and [lints] read as `cargo clippy`
# reads them), so the dependencies are compiled once for both instead of checked for clippy
# and built again for the tests (docs/decisions/0006-ci-within-its-time.md).
CLIPPY_DRIVER := $(shell command -v clippy-driver 2>/dev/null)
LINTED := RUSTC_WORKSPACE_WRAPPER="$(CLIPPY_DRIVER)" CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"

.PHONY: run test setup models ui check-fmt clippy build-tests unit aarch64 bench fmt

# Example memories on first start (once), then the window (its UI embedded from ui/dist).
# The models are fetched with the CLI built as `run` builds it (release), not a second time.
run: SETUP_CARGO_FLAGS = --release
run: setup ui models
	$(STRATA) demo
	$(CARGO) run --quiet --release -p strata-desktop

test: setup ui check-fmt unit

setup:
	@scripts/setup

# The default on-device chat models (scripts/models); STRATA_BIN: a `strata` already built.
models:
	@STRATA_SETUP_CARGO_FLAGS="$(SETUP_CARGO_FLAGS)" scripts/models

# The UI (TypeScript, checked by tsc, bundled by Vite into ui/dist, which the app embeds).
ui:
	npm run build

check-fmt:
	$(CARGO) fmt --all -- --check

# Lints alone (`make test` lints as it builds: build-tests).
clippy:
	$(CARGO) clippy --workspace --all-targets --locked -- -D warnings

# Every test program built and linted, then the models fetched with the `strata` binary that
# build made (no second build of the CLI).
build-tests:
	@test -n "$(CLIPPY_DRIVER)" || { echo "make: clippy-driver is missing (rustup component add clippy)" >&2; exit 1; }
	$(LINTED) $(CARGO) test --workspace --all-targets --locked --no-run --timings
	@STRATA_BIN="$(TARGET_DIR)/debug/strata" scripts/models

# Every test run (over the linted build).
unit: build-tests
	$(LINTED) $(CARGO) test --workspace --all-targets --locked

# After `make test` the test build's `strata` fetches the models (a no-op once there); alone,
# the CLI is built to fetch them.
aarch64: setup
	@STRATA_BIN="$(wildcard $(TARGET_DIR)/debug/strata)" scripts/models
	@scripts/aarch64

bench:
	$(CARGO) bench -p strata-core --bench store

fmt:
	$(CARGO) fmt --all
