// jobc-relay (`jobc relay`) is a module of its own so that the brokers' client
// libraries (nats.go, amqp091-go, franz-go) stay out of the module graph of projects
// that run jobc as a tool.
module github.com/jobc-dev/jobc/cmd/jobc-relay

go 1.26.0

require (
	github.com/jobc-dev/jobc v0.0.0-00010101000000-000000000000
	github.com/jobc-dev/jobc/cmd/internal v0.0.0-00010101000000-000000000000
	github.com/jobc-dev/jobc/contrib/kafka v0.0.0-00010101000000-000000000000
	github.com/jobc-dev/jobc/contrib/nats v0.0.0-00010101000000-000000000000
	github.com/jobc-dev/jobc/contrib/rabbitmq v0.0.0-00010101000000-000000000000
	github.com/nats-io/nats.go v1.55.0
	github.com/spf13/cobra v1.10.2
)

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/pgx/v5 v5.12.0 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/nats-io/nkeys v0.4.16 // indirect
	github.com/nats-io/nuid v1.0.1 // indirect
	github.com/pierrec/lz4/v4 v4.1.33 // indirect
	github.com/rabbitmq/amqp091-go v1.16.0 // indirect
	github.com/robfig/cron/v3 v3.0.1 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
	github.com/twmb/franz-go v1.22.3 // indirect
	github.com/twmb/franz-go/pkg/kmsg v1.15.1 // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	golang.org/x/crypto v0.57.0 // indirect
	golang.org/x/sync v0.25.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.44.0 // indirect
)
