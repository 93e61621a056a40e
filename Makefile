# Strata: the two commands.
#   make run   set up what is missing, build, and start Strata on its embedded defaults
#   make test  the whole suite: formatting, lints, every test
# Other targets: make setup, make bench, make fmt.

CARGO ?= cargo
STRATA := $(CARGO) run --quiet --release -p strata-cli --bin strata --

.PHONY: run test setup check-fmt clippy unit bench fmt

run: setup
	$(STRATA) demo
	$(STRATA) list

test: setup check-fmt clippy unit

setup:
	@scripts/setup

check-fmt:
	$(CARGO) fmt --all -- --check

clippy:
	$(CARGO) clippy --workspace --all-targets --locked -- -D warnings

unit:
	$(CARGO) test --workspace --all-targets --locked

bench:
	$(CARGO) bench -p strata-core --bench store

fmt:
	$(CARGO) fmt --all
