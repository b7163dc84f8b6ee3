# jobc's developer entry points. PostgreSQL: every target that needs one uses
# DATABASE_URL when it is set, and otherwise starts a throwaway cluster from the local
# PostgreSQL binaries (initdb, pg_ctl) for the duration of the command.
#
# The repository holds fifteen modules: the root (runtime, generator, jobctest, dashboard,
# the relay), cmd/jobc (the CLI), cmd/jobc-relay and cmd/jobc-metrics (the relay and the
# metrics server, which `jobc relay` and `jobc metrics` run), cmd/internal (what the three
# commands share), contrib/prometheus and contrib/otel (the metrics and tracing
# adapters), contrib/nats, contrib/rabbitmq and contrib/kafka (the relay's broker sinks),
# examples/shop (an application using them), dashboard/browsertest (the dashboard driven
# in headless Chromium through chromedp), bench (the race against River),
# internal/release (tidying, release versions, the install test) and tools (sqlc,
# golangci-lint). go.work uses all but tools, which requires no jobc module and runs
# with GOWORK=off.

GO          ?= go
WITH_PG     := $(GO) run ./internal/cmd/withpostgres --
SQLC        := cd tools && GOWORK=off $(GO) tool sqlc -f ../sqlc.yaml
# go mod tidy ignores go.work: internal/release tidies each module with the others
# taken from this checkout (see docs/development.md).
RELEASE     := $(GO) run -C internal/release . -root $(CURDIR)
# The CLI runs from its own module; -C takes absolute paths, as its directory differs.
JOBC        := $(GO) run -C cmd/jobc .
EXAMPLES    := $(patsubst %/jobc.yaml,%,$(shell find examples -name jobc.yaml))
# Modules with code: vetted, linted and tidy-checked. bench fails without a database by
# design and is run by hand; tools has no code but is tidy-checked.
CODE_MODULES := . cmd/jobc cmd/jobc-relay cmd/jobc-metrics cmd/internal contrib/prometheus contrib/otel contrib/nats contrib/rabbitmq contrib/kafka examples/shop dashboard/browsertest internal/release
# The tests are split in two tiers by .ci/tiers: `make test` runs those that need only
# PostgreSQL, `make test-integration` those that also need Chromium (the browser tests),
# Node.js and npm (the TypeScript producers), or nats-server and rabbitmq-server (the
# sinks' and jobc-relay's tests; .ci/run installs them; NATS_URL and AMQP_URL select
# running servers instead, except for the tests that restart their broker). `make check`
# fails unless every package's tests run in exactly one of the two.
TIERS := env TIER_MODULES="$(CODE_MODULES)" GO="$(GO)" .ci/tiers

.PHONY: all help check test test-integration race lint demo generate sqlc verify bench vet fuzz tidy release-requires

all: check test test-integration race

## help: list the targets, from their "## name: text" comments
help:
	@awk '/^## [a-z-]+: / { n = substr($$2, 1, length($$2) - 1); sub(/^## [a-z-]+: /, ""); printf "%-18s%s\n", n, $$0; next } \
	  /^## / { sub(/^## /, ""); printf "%-18s%s\n", "", $$0 }' $(MAKEFILE_LIST)

## check: what needs no service: build, go vet, golangci-lint, gofmt, sqlc and jobc
## output, the generator's golden cases, tidy go.mod files (each module also vetted with
## the versions its own go.mod selects, outside the workspace) and the tests' tiers
check: vet lint
	@for m in $(CODE_MODULES) bench; do echo "go build ($$m)"; (cd $$m && $(GO) build ./...) || exit 1; done
	$(SQLC) diff
	@for f in runtime/internal/db/*.sql.go; do q=queries/$$(basename $$f .go); [ -f $$q ] || { echo "$$f has no $$q: run make sqlc"; exit 1; }; done
	@for d in $(EXAMPLES); do echo "jobc diff -C $$d"; $(JOBC) diff -C $(CURDIR)/$$d || exit 1; done
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) test -count=1 -run '^(TestGolden|TestGenerateIsDeterministic)$$' ./generator
	$(GO) test -count=1 -run '^TestLockGolden$$' ./generator/contract
	@$(RELEASE) tidy -diff
	@$(RELEASE) vet
	@echo "go mod tidy -diff (tools)"; cd tools && GOWORK=off $(GO) mod tidy -diff || { echo "tools: go.mod/go.sum not tidy: run make tidy"; exit 1; }
	@$(TIERS) check

## test: run every test that needs only PostgreSQL, of every module
test:
	$(WITH_PG) $(TIERS) test

## test-integration: run the tests that need Chromium, Node.js or a broker (and PostgreSQL)
test-integration:
	$(WITH_PG) $(TIERS) integration

## tidy: go mod tidy in every module, the others taken from this checkout
tidy:
	$(RELEASE) tidy
	cd tools && GOWORK=off $(GO) mod tidy

## release-requires: point the requires between the modules (and go.work) at VERSION,
## in the commit a release tags (make release-requires VERSION=v0.3.0)
release-requires:
	@[ -n "$(VERSION)" ] || { echo "usage: make release-requires VERSION=vX.Y.Z"; exit 2; }
	$(RELEASE) requires $(VERSION)

## verify: check, then the runtime's and jobctest's tests under the race detector
verify: check race

## fuzz: run every fuzz target of every module for FUZZTIME each (seed corpora live in
## testdata/fuzz beside each target; a failure writes its input there)
FUZZTIME ?= 10s
fuzz:
	@$(WITH_PG) env TIER_MODULES="$(CODE_MODULES)" GO="$(GO)" FUZZTIME="$(FUZZTIME)" .ci/fuzz

## race: the runtime's and jobctest's tests under the race detector
race:
	$(WITH_PG) $(GO) test -race -count=1 -timeout 15m ./runtime/... ./jobctest/...

## stress: the runtime's tests under -race, two runs at once (each on its own cluster),
## STRESS_ROUNDS times: a loaded machine's timings, which one run alone does not give
STRESS_ROUNDS ?= 3
stress:
	@for i in $$(seq $(STRESS_ROUNDS)); do \
	  echo "stress round $$i of $(STRESS_ROUNDS)"; \
	  $(WITH_PG) $(GO) test -race -count=1 -timeout 15m ./runtime & other=$$!; \
	  $(WITH_PG) $(GO) test -race -count=1 -timeout 15m ./runtime; this=$$?; \
	  wait $$other && [ $$this -eq 0 ] || exit 1; \
	done

## lint: golangci-lint (pinned in tools/go.mod, configured in .golangci.yml) over every module
LINT := $(CURDIR)/.bin/golangci-lint
lint:
	GOWORK=off $(GO) build -C tools -o $(LINT) github.com/golangci/golangci-lint/v2/cmd/golangci-lint
	@for m in $(CODE_MODULES) bench; do echo "golangci-lint ($$m)"; (cd $$m && $(LINT) run --allow-parallel-runners --config $(CURDIR)/.golangci.yml ./...) || exit 1; done

## demo: generate, migrate and run the quickstart end to end
demo:
	$(GO) generate ./examples/quickstart
	$(WITH_PG) $(GO) run ./examples/quickstart

## generate: regenerate the examples' jobc code and the golden cases
generate:
	$(GO) generate ./examples/...
	cd examples/shop && $(GO) generate ./...   # its own module

## sqlc: regenerate runtime/internal/db from queries/*.sql and schema/*.sql
sqlc:
	rm -f runtime/internal/db/*.go
	$(SQLC) generate

## vet: go vet over every module (bench too: the race against River must keep compiling)
vet:
	@for m in $(CODE_MODULES) bench; do echo "go vet ($$m)"; (cd $$m && $(GO) vet ./...) || exit 1; done

## bench: run the Go benchmarks
bench:
	$(WITH_PG) $(GO) test -run '^$$' -bench . -benchmem ./...
