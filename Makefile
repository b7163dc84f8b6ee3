# jobc's developer entry points. PostgreSQL: every target that needs one uses
# DATABASE_URL when it is set, and otherwise starts a throwaway cluster from the local
# PostgreSQL binaries (initdb, pg_ctl) for the duration of the command.

GO          ?= go
WITH_PG     := $(GO) run ./internal/cmd/withpostgres --
SQLC        := cd tools && $(GO) tool sqlc -f ../sqlc.yaml
EXAMPLES    := $(patsubst %/jobc.yaml,%,$(shell find examples -name jobc.yaml))

.PHONY: all test demo generate sqlc verify bench vet fmt

all: verify test

## test: run every test against a real PostgreSQL
test:
	$(WITH_PG) $(GO) test -count=1 -timeout 15m ./...

## demo: generate, migrate and run the quickstart end to end
demo:
	$(GO) generate ./examples/quickstart
	$(WITH_PG) $(GO) run ./examples/quickstart

## generate: regenerate the examples' jobc code and the golden cases
generate:
	$(GO) generate ./examples/...

## sqlc: regenerate runtime/internal/db from queries/*.sql and schema/*.sql
sqlc:
	rm -f runtime/internal/db/*.go
	$(SQLC) generate

## verify: fail when generated code is stale or code is unformatted or vetted badly
verify: vet
	$(SQLC) diff
	@for f in runtime/internal/db/*.sql.go; do q=queries/$$(basename $$f .go); [ -f $$q ] || { echo "$$f has no $$q: run make sqlc"; exit 1; }; done
	@for d in $(EXAMPLES); do echo "jobc diff -C $$d"; $(GO) run ./cmd/jobc diff -C $$d || exit 1; done
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...
	cd bench && $(GO) vet ./...   # its own module: the race against River must keep compiling

## bench: run the Go benchmarks
bench:
	$(WITH_PG) $(GO) test -run '^$$' -bench . -benchmem ./...
