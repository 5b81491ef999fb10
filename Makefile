# mwperf: `make run` sets everything up and runs the default characterization;
# `make test` sets everything up and runs every test. Both are idempotent.
SHELL := /bin/bash
VENV  := .venv
PY    := $(VENV)/bin/python
MWPERF := $(VENV)/bin/mwperf
AGENT_BUILD := agent/build
AGENT := $(AGENT_BUILD)/mwperf-agent
BIN_DIR ?= /usr/local/bin

# The default local characterization (plans/quick.yaml): every built
# middleware next to the raw UDP/TCP floor, on loopback, adaptive duration.
PLAN ?= plans/quick.yaml

.PHONY: setup deps deps-system deps-wheels venv agent link run test test-unit test-agent test-agent-docs test-side test-apart test-python lint bench docs clean format check-format bundle bundle-aarch64

# The system's packages first (the venv needs python3-venv); then the venv
# beside the agent's wheels and build (ninja keeps the cores busy; pip mostly
# waits on downloads and the cache).
setup: deps-system
	$(MAKE) --no-print-directory -j2 venv agent
	$(MAKE) --no-print-directory link

deps: deps-system deps-wheels

deps-system:
	@scripts/install-deps.sh

# What the adapters build against (.deps/): the install.sh of each adapter's
# folder that has one (PyPI wheels; Cyclone DDS 11 from the cyclors crate's
# source, its install tree cached in ~/.cache/mwperf)
deps-wheels:
	@for script in agent/src/adapters/*/install.sh; do "$$script" || exit 1; done

$(VENV)/.stamp: python/pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e 'python[test,docs,postgresql,figures,parquet,lab]'
	$(PY) -m compileall -q python/mwperf python/tests  # not once per parallel worker
	touch $@

venv: $(VENV)/.stamp

agent: deps-wheels
	cmake -S agent -B $(AGENT_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build $(AGENT_BUILD)

# Puts `mwperf` on the PATH when BIN_DIR is writable (as root); otherwise use
# .venv/bin/mwperf or `source .venv/bin/activate`.
link:
	@if [ -w "$(BIN_DIR)" ]; then ln -sf "$(CURDIR)/$(MWPERF)" "$(BIN_DIR)/mwperf"; \
	  echo "mwperf -> $(BIN_DIR)/mwperf"; \
	else echo "note: $(BIN_DIR) not writable; use $(CURDIR)/$(MWPERF)"; fi
	@if [ -d /etc/bash_completion.d ] && [ -w /etc/bash_completion.d ]; then \
	  $(MWPERF) completion bash > /etc/bash_completion.d/mwperf && echo "bash completion: /etc/bash_completion.d/mwperf"; fi

run: setup
	$(MWPERF) sweep $(PLAN)

test: setup
	@scripts/check-format.sh
	$(MAKE) --no-print-directory -j2 test-agent-docs test-side
	$(MAKE) --no-print-directory test-apart

# What can run side by side does, all at once: the agent's tests (the core's
# unit tests, JOBS at a time, then the adapters' one at a time: they mostly
# wait on discovery and matching, each on a topic of its own) next to the
# Python tests that do not measure and the measuring ones marked
# `side_by_side`, which mostly wait on their points (SIDE_JOBS at a time,
# --dist loadgroup keeping a module's shared run on one worker). What measures
# otherwise (marker `measuring`: namespaces, nftables, RouDi, timing) runs one
# at a time after.
JOBS ?= $(shell nproc)
SIDE_JOBS ?= $(shell n=$$(nproc); echo $$(( 2 * n < 4 ? 2 * n : 4 )))

# (their logs apart: the Python tests' progress is shown meanwhile)
test-unit:
	@log=$(AGENT_BUILD)/test-unit.log; \
	if ctest --test-dir $(AGENT_BUILD) --output-on-failure -j $(JOBS) -L unit > $$log 2>&1; \
	then grep -E "tests passed|Total Test time" $$log; else cat $$log; exit 1; fi

test-agent: test-unit
	@log=$(AGENT_BUILD)/test-adapters.log; \
	if ctest --test-dir $(AGENT_BUILD) --output-on-failure -LE unit > $$log 2>&1; \
	then grep -E "tests passed|Total Test time" $$log; else cat $$log; exit 1; fi

# The documentation site and the lint after the agent's tests, still beside the side-by-side part
test-agent-docs: test-agent
	@$(MAKE) --no-print-directory docs lint

test-side:
	$(PY) -m pytest python/tests -q -m "not measuring or side_by_side" -n $(SIDE_JOBS) --dist loadgroup

test-apart:
	$(PY) -m pytest python/tests -q -m "measuring and not side_by_side"

test-python: test-side
	$(MAKE) --no-print-directory test-apart

# The controller's Python as python/pyproject.toml says: ruff (pyflakes, pycodestyle, bugbear) and mypy
# (strict on mwperf/model, the record). Part of make test, beside the side-by-side tests (a few seconds of CPU).
lint:
	cd python && ../$(VENV)/bin/ruff check mwperf tests && ../$(VENV)/bin/mypy

bench: setup
	bench/run.sh

# The self-contained agent bundles a far host runs (mwperf bundle, into bundles/): this
# machine's, and aarch64 cross-built (its toolchain, qemu and Debian's arm64 package lists
# first: scripts/install-cross-arm64.sh, ~100 MB, not part of make setup).
bundle: deps-system venv agent
	$(MWPERF) bundle --arch x86_64

bundle-aarch64: deps-system venv deps-wheels
	@scripts/install-cross-arm64.sh
	$(MWPERF) bundle --arch aarch64

# The documentation site (mkdocs.yml) into site/: strict (a broken link or anchor fails; not
# with -q, which hides the warnings strict counts), offline; its log only when it fails.
docs: venv
	@out=$$(NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict 2>&1) || { echo "$$out"; exit 1; }; \
	echo "docs: site/index.html (mkdocs build --strict)"

# The agent's C++ as .clang-format says: `make format` rewrites, `make check-format` (part of make test) checks.
format:
	@scripts/check-format.sh --fix

check-format:
	@scripts/check-format.sh

clean:
	rm -rf $(AGENT_BUILD) $(VENV)
