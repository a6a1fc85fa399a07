# The verbs people type. See README.md.
BUILD ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all bootstrap build test test-capture-repeat test-asan test-tsan demo format format-check docs bench fuzz clean install

all: build

bootstrap:
	@scripts/bootstrap.sh

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS)

build: bootstrap $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

# Every test: unit, diff, browser, include rules, docs-in-sync, then the capture
# tests ten times over (test-capture-repeat), then the same
# suites again under ASan+UBSan, then the fuzzers briefly.
test: build
	$(MAKE) format-check
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	$(MAKE) test-capture-repeat
	$(MAKE) test-asan
	$(MAKE) test-tsan
	$(MAKE) fuzz

# The capture tests (label capture: ring, collector, launcher, signals, host sampling,
# Python stacks, the collector's security) ten times over under ctest -j: a flake under
# load fails CI instead of one run in six (issue 36). kill9_loop (label kill9, 50 kills)
# runs once in the plain ctest above.
test-capture-repeat: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -L capture --repeat until-fail:10

test-asan: bootstrap
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DSTEPSCOPE_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug $(CMAKE_FLAGS)
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=0 ctest --output-on-failure -j $(JOBS) -LE no_asan

# The capture tests (shared ring, tracer -> collector, the injected tracer inside a
# multi-threaded program) under ThreadSanitizer.
TSAN_TESTS = shm_ring_test collector_test stepscope stepscope_inject nvtx_app
test-tsan: bootstrap
	cmake -S . -B $(TSAN_BUILD) -G Ninja -DSTEPSCOPE_TSAN=ON -DCMAKE_BUILD_TYPE=Debug $(CMAKE_FLAGS)
	cmake --build $(TSAN_BUILD) -j $(JOBS) --target $(TSAN_TESTS)
	cd $(TSAN_BUILD) && TSAN_OPTIONS=halt_on_error=1 ctest --output-on-failure -L tsan

fuzz: bootstrap
	@scripts/run_fuzzers.sh

# Build, then run the main job: profile the bundled workload when a GPU is
# present, else analyze the bundled sample trace; ends with the HTML report.
demo: build
	@scripts/demo.sh $(BUILD)

format:
	git ls-files '*.cc' '*.h' | xargs clang-format -i

# Lint: clang-format, and every file under bench/results cited by a document (docs/*.md,
# README.md, bench/README.md, tests/**/README.md, source comments).
format-check:
	@git ls-files '*.cc' '*.h' | xargs clang-format --dry-run --Werror && echo "format-check: ok"
	@python3 tools/check_bench_results.py && echo "check_bench_results: ok"

docs: build
	$(BUILD)/bin/stepscope schema --markdown > docs/schema.md

bench: build
	@echo "see bench/README.md: each figure has its own script"

install: build
	cmake --install $(BUILD) --prefix $(or $(PREFIX),/usr/local)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) build-fuzz
