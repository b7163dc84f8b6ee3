// The plumbing the jobc, jobc-relay and jobc-metrics commands share (database flags
// and timeouts, exit statuses, usage errors, tables) is a module of its own: cobra
// stays out of the root module's graph, and each command's module requires only it.
// Its packages are internal to github.com/jobc-dev/jobc/cmd/.
module github.com/jobc-dev/jobc/cmd/internal

go 1.25.0

require (
	github.com/jackc/pgx/v5 v5.12.0
	github.com/jobc-dev/jobc v0.0.0-00010101000000-000000000000
	github.com/spf13/cobra v1.10.2
	github.com/spf13/pflag v1.0.9
)

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	github.com/robfig/cron/v3 v3.0.1 // indirect
	golang.org/x/sync v0.22.0 // indirect
	golang.org/x/text v0.41.0 // indirect
)
