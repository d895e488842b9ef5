# Two entry points for a fresh machine: `make demo` and `make test`.
# Both create .venv when missing and install the pinned environment.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
PYTEST  := $(BIN)/python -m pytest
JOBS    ?= 2

.PHONY: python-check demo lint test test-slow bench lab pin release solutions solution-notebooks sandbox-deps browser-deps slurm-deps clean

# The lock's floor (soupsieve and others need 3.11.5): refuse an older Python in one line,
# before anything is installed (Debian 12's /usr/bin/python3 is 3.11.2).
PY_FLOOR := 3.11.5
python-check:
	@$(PY) -c 'import sys; sys.exit(0 if sys.version_info[:3] >= tuple(map(int, "$(PY_FLOOR)".split("."))) else 1)' 2>/dev/null || { \
	  echo "make: $(PY) is Python $$($(PY) -c 'import platform; print(platform.python_version())' 2>/dev/null || echo '?'); the pinned environment needs Python >= $(PY_FLOOR): run make PY=/path/to/python$(PY_FLOOR)-or-newer"; exit 1; }

$(STAMP): requirements.lock pyproject.toml
	@$(MAKE) --no-print-directory python-check
	@$(MAKE) --no-print-directory sandbox-deps
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -r requirements.lock
	$(BIN)/python -m pip install -q --no-deps --no-build-isolation -e .
	touch $(STAMP)

# The grading sandbox: bubblewrap (namespaces, file-system allow-list) and libseccomp
# (the system-call allow-list, used through pyseccomp); libcap2-bin's capsh for the tests'
# Docker-like simulation of the fallback. Installed where we may (root with apt). Without
# them the grader still runs, with weaker isolation, and says so.
SANDBOX_APT := bubblewrap libseccomp2 libcap2-bin
sandbox-deps:
	@if ! command -v bwrap >/dev/null 2>&1 || ! command -v capsh >/dev/null 2>&1 || ! ldconfig -p 2>/dev/null | grep -q libseccomp.so.2; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing $(SANDBOX_APT) (grading sandbox)"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(SANDBOX_APT)) >/dev/null \
	      || echo "WARNING: could not install $(SANDBOX_APT); grading will use weaker isolation"; \
	  else echo "WARNING: $(SANDBOX_APT) missing and cannot be installed (need root + apt)"; fi; \
	fi

# The distribution's Chromium, which the tests drive headless through Playwright to open the
# class report and the solution pages (no script may run, no console error). Installed where
# we may (root with apt); without it those tests are skipped and say so.
browser-deps:
	@if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing chromium (browser checks of the generated pages)"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null \
	      || echo "WARNING: could not install chromium; the browser checks will be skipped"; \
	  else echo "WARNING: chromium missing and cannot be installed (need root + apt); browser checks skipped"; fi; \
	fi

# SLURM and munge, for the slow test that runs docs/sharding/slurm-array.sbatch on a one-node
# cluster it starts under a temporary folder (tests/autograder/workflows/test_slurm_cluster.py, which
# runs this target itself). Installed where we may (root with apt); the packages' services are
# not started here (the test starts its own daemons). Without them that test is skipped and says so.
SLURM_APT := slurm-wlm munge
slurm-deps:
	@if ! command -v sbatch >/dev/null 2>&1 || ! command -v slurmctld >/dev/null 2>&1 || ! command -v slurmd >/dev/null 2>&1 || ! command -v munged >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing $(SLURM_APT) (the SLURM job-array test of docs/sharding)"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(SLURM_APT)) >/dev/null \
	      || echo "WARNING: could not install $(SLURM_APT); the SLURM test will be skipped"; \
	  else echo "WARNING: $(SLURM_APT) missing and cannot be installed (need root + apt); the SLURM test is skipped"; fi; \
	fi

demo: $(STAMP)
	$(BIN)/m5 demo

# The hygiene gate (seconds): ruff (pyproject's [tool.ruff]), the import contracts
# (pyproject's [tool.importlinter]) and mypy on the fully annotated modules ([tool.mypy]).
# make test runs it first, so .ci/run enforces it.
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/mypy

# The fast suite: $(JOBS) xdist workers, and beside them one more process for the tests
# marked `beside` (they mostly sleep until a wall-clock cap, so on a worker they would
# leave a core idle); its report follows the workers' one, and make fails if either run
# fails. The student kit is built first, once, so that neither process rebuilds it under
# the other. Only the files whose text says `mark.beside` are collected beside (collecting
# all of tests/ costs seconds of CPU the workers want); tests/conftest.py refuses a test
# marked beside in any other way, which neither process would run.
BESIDE_FILES := $(shell grep -rl --include='test_*.py' 'mark\.beside' tests)
test: $(STAMP) lint browser-deps
	$(BIN)/python -c 'from autograder.assign.release import ensure_kits; ensure_kits()'
	@export M5_TESTS_KIT_PREBUILT=1; beside_log="$$(mktemp)"; \
	$(PYTEST) -q -p no:cacheprovider -m "beside and not slow" --durations=10 $(BESIDE_FILES) >"$$beside_log" 2>&1 & beside_pid=$$!; \
	$(PYTEST) -q -n $(JOBS) --dist worksteal -m "not slow and not beside" --durations=25; workers=$$?; \
	wait $$beside_pid; beside=$$?; \
	echo "--- the tests marked beside, run in one process beside the workers:"; cat "$$beside_log"; rm -f "$$beside_log"; \
	[ $$workers -eq 0 ] && [ $$beside -eq 0 ]

test-slow: $(STAMP) slurm-deps
	$(PYTEST) -q -m slow

bench: $(STAMP)
	$(BIN)/python bench/kernels.py
	$(BIN)/python bench/grading.py
	$(BIN)/python bench/lab.py

lab: $(STAMP)
	$(BIN)/m5 lab --profile smoke --out lab-out

# The committed report and pins: every seed of the study (33 minutes in one process on the 2-core
# AMD host; about 17 with --jobs 2, an estimate: docs/performance.md).
pin: $(STAMP)
	$(BIN)/python -m reference_impl.lab.side_studies
	$(BIN)/m5 lab --profile full --seeds 10 --jobs 2 --out docs/lab-results --lang en --lang ru --pin
	$(BIN)/python -m reference_impl.lab.results readme

release: $(STAMP)
	$(BIN)/m5 release

# Executed solution notebooks (smoke profile, hidden tests stripped), then the HTML bundle.
solution-notebooks: $(STAMP)
	$(BIN)/python -m autograder.export.solution_notebooks

solutions: $(STAMP)
	$(BIN)/m5 solutions --out solutions-html

clean:
	rm -rf $(VENV) lab-out out .pytest_cache .ruff_cache .import_linter_cache .mypy_cache
