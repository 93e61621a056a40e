# Strata: the two commands.
#   make run   set up what is missing, build, and open the desktop app on its embedded defaults
#   make test  the whole suite: formatting, lints, every test
# Other targets: make setup, make ui, make bench, make fmt, make aarch64 (the engine built for
# aarch64 Linux, its core and models tests run under qemu; CI runs it after `make test`).

CARGO ?= cargo
STRATA := $(CARGO) run --quiet --release -p strata-cli --bin strata --

.PHONY: run test setup ui check-fmt clippy unit aarch64 bench fmt

# Example memories on first start (once), then the window (its UI embedded from ui/dist).
# setup fetches the models with the CLI built as `run` builds it (release), not a second time.
run: SETUP_CARGO_FLAGS = --release
run: setup ui
	$(STRATA) demo
	$(CARGO) run --quiet --release -p strata-desktop

test: setup ui check-fmt clippy unit

setup:
	@STRATA_SETUP_CARGO_FLAGS="$(SETUP_CARGO_FLAGS)" scripts/setup

# The UI (TypeScript, checked by tsc, bundled by Vite into ui/dist, which the app embeds).
ui:
	npm run build

check-fmt:
	$(CARGO) fmt --all -- --check

clippy:
	$(CARGO) clippy --workspace --all-targets --locked -- -D warnings

unit:
	$(CARGO) test --workspace --all-targets --locked

aarch64: setup
	@scripts/aarch64

bench:
	$(CARGO) bench -p strata-core --bench store

fmt:
	$(CARGO) fmt --all
