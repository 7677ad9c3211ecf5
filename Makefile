# rantcp: the whole set-up is `make run` and `make test` (see README.md).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
export CARGO_TERM_COLOR := never

.PHONY: run test fmt-check typecheck test-rust test-python bench bench-reproduce develop deps system-deps schema clean

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# Python dependencies, re-installed when pyproject.toml or this list changes. hypothesis stays
# below 6.156: hypothesis-jsonschema 0.23.1 (the config fuzzer's) uses an internal API that
# later releases changed (`'many' object has no attribute 'more'` with 6.170).
# mypy stays within one minor release: a new one may add checks, and `make typecheck` must not
# start failing on a fresh clone because of a mypy release alone (pyproject's `test` extra agrees).
$(VENV)/.deps: pyproject.toml Makefile | $(VENV)/bin/python
	$(PY) -m pip install --quiet "maturin>=1.5,<2" "pandas>=2.2" "pyarrow>=15" "numpy>=1.26" "matplotlib>=3.8" "rich>=13" \
		"pydantic>=2.6,<3" "tomli-w>=1.0" "jinja2>=3.1" \
		"pytest>=8" "pytest-timeout>=2.3" "mypy>=2.4.1,<2.5" "dask[distributed]>=2024.1" "duckdb>=1.3" \
		"hypothesis>=6.100,<6.156" "hypothesis-jsonschema>=0.23"
	touch $@

deps: $(VENV)/.deps

# Build the Rust core and install the Python package (editable) into .venv, only when a Rust
# source, a built-in scenario, a Cargo file or pyproject.toml changed since the last build (the
# stamp); Python sources need no rebuild (the install is editable).
NATIVE_SOURCES := $(shell find crates -type f \( -name '*.rs' -o -name '*.toml' -o -name '*.json' \) -not -path '*/target/*') \
	Cargo.toml Cargo.lock pyproject.toml

$(VENV)/.develop: $(NATIVE_SOURCES) | $(VENV)/.deps
	VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(VENV))/bin:$$PATH $(VENV)/bin/maturin develop --release --quiet
	touch $@

develop: $(VENV)/.develop

# Debian packages the tests need: tshark (pcap validation and the trace analysis's reference),
# tcpdump, nftables, iproute2, curl and ethtool (real TCP transfers between network namespaces),
# ping and iperf3 (real-time emulation: its tests, fidelity table and bench).
system-deps:
	@command -v tshark >/dev/null || { \
		echo "installing tshark (Debian) for the pcap tests"; \
		echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tshark >/dev/null; }
	@for t in tcpdump:tcpdump nft:nftables ip:iproute2 tc:iproute2 curl:curl ethtool:ethtool ping:iputils-ping iperf3:iperf3; do \
		command -v $${t%%:*} >/dev/null || need="$$need $${t#*:}"; done; \
	if [ -n "$$need" ]; then \
		echo "installing$$need (Debian) for the trace tests (network namespaces)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$need >/dev/null; fi
	@command -v chromium >/dev/null || { \
		echo "installing chromium (Debian) for the HTML report test"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

run: develop
	$(VENV)/bin/rantcp run builtin:p2p-bulk --out out/p2p-bulk --plots

test: develop system-deps fmt-check typecheck test-rust test-python

# Static types of the Python package (pyproject.toml [tool.mypy]: strict, over python/rantcp),
# then of tests/ and scripts/ (tests/mypy.ini: mypy's defaults plus check_untyped_defs, so
# their calls into rantcp are checked), then mypy's stubtest of python/rantcp/_native.pyi
# against the built extension (names, parameters, defaults), so the stub cannot drift from
# crates/py. 5 s (12 s with no cache); tests/ and scripts/ add 0.5 s of CPU (13 s with no
# cache). mypy's caches are under .mypy_cache/ (git-ignored).
typecheck: develop
	$(VENV)/bin/mypy
	$(VENV)/bin/mypy --config-file tests/mypy.ini tests scripts
	$(PY) -m mypy.stubtest rantcp._native

# rustfmt's check comes first (a second, not a build): the tree is kept formatted, so a drifted
# file fails here with the command that fixes it. Skipped, with a line saying so, where the
# toolchain has no rustfmt component.
test-rust: fmt-check
	cargo test --workspace --release

fmt-check:
	@if cargo fmt --version >/dev/null 2>&1; then \
		cargo fmt --all --check >/dev/null || { cargo fmt --all --check -- --color never | head -40; \
			echo "rustfmt: these files are not formatted; run 'cargo fmt --all'"; exit 1; }; \
	else echo "rustfmt is not installed: the format check is skipped"; fi

# --durations: the 15 slowest tests in the log, so a test that grows shows where CI time goes.
test-python: develop system-deps
	$(VENV)/bin/python -m pytest tests --durations=15

bench: develop
	cargo run --release -q -p rantcp-bench
	$(VENV)/bin/python -m rantcp._bench_sweep
	$(VENV)/bin/python -m rantcp._bench_process
	$(VENV)/bin/python -m rantcp.trace._bench
	$(VENV)/bin/python -m rantcp._bench_reproduce
	$(VENV)/bin/python -m rantcp._bench_emulate

# Opt-in (421 runs of 60 s, 5 repetitions per point: 21 min with one worker at load 3.5-6 on
# this shared 2-core machine; 253 runs and 14-30 min with 3): the whole seed-004
# reproduction from scratch; `make bench` then reports its wall time.
bench-reproduce: develop
	$(VENV)/bin/python -m rantcp._bench_reproduce --run

# Regenerate the shipped JSON Schemas of scenario configs and sweep files (tests check them).
schema: develop
	$(VENV)/bin/rantcp schema > python/rantcp/config.schema.json
	$(VENV)/bin/rantcp schema --sweep > python/rantcp/sweep.schema.json

clean:
	cargo clean
	rm -rf $(VENV) out .mypy_cache
