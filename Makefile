# The two commands a newcomer needs: `make run` and `make test`.
SHELL := /bin/bash
BIN := $(CURDIR)/.bin
export PATH := $(BIN):$(PATH)

# Every module of the workspace, in dependency order.
MODULES := proto pkg services/metering/admission services/metering services/finance services/converter services/jobs gateway deploy/local deploy/k8s

.PHONY: run test test-dates examples vet lint gen gen-check tools tidy build fmt fuzz-edge faults load rules-check bench bench-compare bench-peer

# Build identity for /v1/version; empty outside a git checkout.
COMMIT := $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X main.commit=$(COMMIT) -X main.buildTime=$(shell date -u +%Y-%m-%dT%H:%M:%SZ)

run: ## Start the whole system on embedded defaults (gateway on 127.0.0.1:8080).
	go build -ldflags "$(LDFLAGS)" -o $(BIN)/local ./deploy/local/cmd/local
	GOGC=$${GOGC:-400} exec $(BIN)/local

test: vet ## go vet and go test -race over every module, then the date sweep.
	@set -e; for m in $(MODULES); do echo "== go test $$m"; (cd $$m && go test -race -count=1 ./...); done
	@echo "== date sweep (without -race)"; $(MAKE) --no-print-directory test-dates

# The date sweep alone (docs/testing.md): the seeded stack at month ends,
# 29 February, DST changes, New Year, ... and the date-sensitive end-to-end
# checks at each. `make test` runs it last; it runs without -race, since its
# checks run under -race in their own end-to-end tests.
test-dates:
	cd deploy/local && go test -count=1 -run '^TestDateSweep$$' .

# The OpenAPI document's request and response examples: the end-to-end
# suite's first successful exchange of each operation, scrubbed of secrets
# (deploy/local/examples_test.go), into docs/openapi/examples.json; then
# `make gen` puts them in the document (which validates each against its
# schema). Run it after changing what an operation takes or answers.
examples:
	cd deploy/local && OPENAPI_EXAMPLES=$(CURDIR)/docs/openapi/examples.json go test -count=1 -skip '^(TestDateSweep|TestPortalInBrowser)$$' .
	$(MAKE) --no-print-directory gen

# Arbitrary requests against the whole in-process stack; fails on any 5xx.
FUZZTIME ?= 60s
fuzz-edge:
	cd deploy/local && go test -run '^$$' -fuzz '^FuzzEdge$$' -fuzztime $(FUZZTIME) .

# The load tool (docs/load.md): a short run of the default mix against the
# whole stack started in its own process (on REDIS_URL, NATS_URL and
# DATABASE_URL when set). LOAD_FLAGS adds or overrides flags, e.g.
# LOAD_FLAGS='-rate 0 -duration 30s' or LOAD_FLAGS='-target http://host:8080 -keys-file keys.json'.
LOAD_FLAGS ?=
load:
	go build -o $(BIN)/load ./deploy/local/cmd/load
	GOGC=$${GOGC:-400} $(BIN)/load -samples $(CURDIR)/../shared/samples -duration 10s -rate 200 $(LOAD_FLAGS)

# The Prometheus alert rules (deploy/monitoring, docs/monitoring.md): syntax
# and their unit tests. Skips with the reason when promtool is not installed
# (Debian package `prometheus`; .ci/run installs it).
rules-check:
	@if ! command -v promtool >/dev/null 2>&1; then echo "rules-check: skipped: promtool not installed (apt-get install prometheus)"; exit 0; fi; \
		promtool check rules deploy/monitoring/alerts.yaml && \
		cd deploy/monitoring && promtool test rules alerts_test.yaml

# The fault suite (docs/faults.md): its own PostgreSQL, Redis and NATS on free
# ports, the binaries as separate processes, faults injected while work flows.
# FAULTS=quick runs the bounded subset CI runs; FAULTS_RUN=<word> picks scenarios.
FAULTS ?= all
faults:
	cd deploy/local && FAULTS=$(FAULTS) go test -count=1 -v -run '^TestFaults$$' -timeout 45m ./faults

# The fixed benchmark set (docs/benchmarks.md): every conversion family
# through the engine on the shared real files, the route lookup, admission on
# Redis and the metered convert in process. `make bench` prints the table;
# `make bench-compare BASE=<commit>` runs the set on a worktree of BASE and on
# this tree, round by round, and prints benchstat's comparison.
COUNT ?= 6
BENCHTIME ?= 300ms
bench:
	COUNT=$(COUNT) BENCHTIME=$(BENCHTIME) bench/bench.sh run

bench-compare:
	@test -n "$(BASE)" || { echo "usage: make bench-compare BASE=<commit>"; exit 2; }
	COUNT=$(COUNT) BENCHTIME=$(BENCHTIME) bench/bench.sh compare $(BASE)

# The engine's MT940 parser beside the npm mt940js parser on the same files.
bench-peer:
	bench/peer.sh

vet:
	@set -e; for m in $(MODULES); do (cd $$m && go vet ./...); done

build:
	@set -e; for m in $(MODULES); do (cd $$m && go build ./...); done

# Code generators and linters are pinned in proto/tools/go.mod (go tool
# directives) and built locally: no remote registry.
tools: $(BIN)/buf
$(BIN)/buf: proto/tools/go.mod proto/tools/go.sum
	cd proto/tools && GOWORK=off GOBIN=$(BIN) go install tool
	@touch $@

# staticcheck over every module, and gofmt over every hand-written file.
lint: tools
	@set -e; for m in $(MODULES); do (cd $$m && staticcheck ./...); done
	@out=$$(gofmt -l proto pkg services gateway deploy | grep -v '\.pb\(\.gw\)\?\.go$$'); \
		if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

gen: tools ## Regenerate Go, gRPC, gateway and OpenAPI code from proto/.
	buf lint
	buf generate
	go run ./gateway/openapi/gen -in docs/openapi/api.swagger.json -out gateway/openapi/openapi.json
	cd services/converter && UPDATE_DOCS=1 go test -count=1 -run '^TestCoverageTable$$' ./builtin

# Fails when the committed generated code differs from what `make gen` writes.
gen-check: gen
	@git add -N proto docs/openapi gateway/openapi/openapi.json docs/conversion-formats.md >/dev/null 2>&1 || true
	@if ! git diff --quiet -- proto docs/openapi gateway/openapi/openapi.json docs/conversion-formats.md; then \
		echo "generated code is stale: run 'make gen' and commit"; git diff --stat -- proto docs/openapi gateway/openapi/openapi.json docs/conversion-formats.md; exit 1; fi

fmt:
	gofmt -w $$(git ls-files '*.go' | grep -v '\.pb\(\.gw\)\?\.go$$')

tidy:
	@set -e; for m in $(MODULES); do (cd $$m && go mod tidy); done
