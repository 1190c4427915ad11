# mcpredict — see README.md.
#   make run    set up what run needs (spin, gcc if missing), build, predict on an example
#   make test   set up, then vet, format check, go test -race -short ./... (unit + end-to-end),
#               and the full native/Spin/oracle differential tests
#               and the Docker nightly run for real (make docker-test)
#   make bench  benchmarks, printed as a table

GO      ?= go
BIN     := bin/mcpredict
EXAMPLE ?= examples/bank.csv

.PHONY: setup setup-run build run test docker-test bench precision generate clean

# Everything the project needs, the tests' tools included (Chromium, Docker).
setup:
	./scripts/setup.sh

# Only what `mcpredict run` and the recorder need (Spin, gcc, the Go modules).
setup-run:
	./scripts/setup.sh run

# mcpredict and the trace-format plugins it finds next to itself.
build:
	$(GO) build -o $(BIN) ./cmd/mcpredict
	$(GO) build -o bin/mcpredict-format-std ./plugins/std
	$(GO) build -o bin/mcpredict-format-jsonl ./plugins/jsonl

# mcpredict exits 1 when it predicts violations: that is the expected outcome here.
run: setup-run build
	./$(BIN) run $(EXAMPLE); status=$$?; [ $$status -le 1 ] || exit $$status

test: setup build
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags docker ./service/e2e
	$(GO) test -race -short -timeout 20m ./...
	# The differential tests at full size, without the race detector (they
	# are single-goroutine; -race made them 10x slower): native vs Spin
	# on 250 random traces, native vs the brute-force oracle on 5,000
	# (models of one variable) and 2,000 (models of atomic sets).
	$(GO) test -count=1 -timeout 20m -run 'TestNativeMatches' ./native
	# Models without the locks of empty holds against models with every
	# lock, on 4,000 random traces and generated ones (the same reports).
	$(GO) test -count=1 -timeout 10m -run 'TestEmptyHoldsLeftOut' ./predict
	# The hostile-input suite at full size (a million threads), and a trace
	# of 2 M events spilled to disk against the in-memory path (the same
	# report, and its peak memory measured in a child process).
	$(GO) test -count=1 -timeout 10m -run 'TestHostileInput|TestLargeTrace' ./cmd/mcpredict
	$(MAKE) docker-test

# The Docker nightly for real (service/e2e/docker_test.go): local base
# images (scripts/docker-images.sh), docker compose build and up on the host
# network, two nights, a worker killed mid-job, down -v. Needs the engine and
# Compose v2 that make setup installs and starts; fails (never skips)
# without them.
docker-test: setup
	$(GO) test -tags docker -count=1 -timeout 30m -run TestDockerNightly -v ./service/e2e

bench: setup build
	./scripts/bench.sh

# Records and checks every annotated program of examples/c with the native
# and the auto (Spin-confirmed) engine: a Markdown table per engine; exit 1
# if an expected bug is missed or anything else is reported; what every
# analysis (--analysis all) reports on each program; and what mcpredict
# reproduce makes of each recording (every expected bug reproduced, no
# correct program's run failed), then of examples/c/prove (bugs that need
# another value: a failed run each); then every program recorded with the
# threads one after the other, in both orders (record --serial: what is
# still predicted when the recorded threads never overlapped; its known
# misses are in docs/precision.md, so these two tables do not fail it).
precision: setup build
	$(GO) run ./internal/precision/cmd/precision -engine native,auto -bin $(BIN) -survey all -reproduce -v examples/c examples/c/sets
	$(GO) run ./internal/precision/cmd/precision -bin $(BIN) -reproduce-only -v examples/c/prove examples/c/fail
	-$(GO) run ./internal/precision/cmd/precision -engine native -bin $(BIN) -serial first examples/c examples/c/sets
	-$(GO) run ./internal/precision/cmd/precision -engine native -bin $(BIN) -serial last examples/c examples/c/sets

# Regenerates the ANTLR parser of the pattern language (needs Node/npm).
generate:
	$(GO) generate ./...

clean:
	rm -rf bin
