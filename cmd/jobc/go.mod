// The jobc CLI is a module of its own so that its dependencies (cobra, progressbar)
// stay out of the module graph of applications that only import the runtime.
module github.com/jobc-dev/jobc/cmd/jobc

go 1.26.0

require (
	github.com/jackc/pgx/v5 v5.12.0
	github.com/jobc-dev/jobc v0.0.0
	github.com/jobc-dev/jobc/contrib/kafka v0.0.0
	github.com/jobc-dev/jobc/contrib/nats v0.0.0
	github.com/jobc-dev/jobc/contrib/prometheus v0.0.0
	github.com/jobc-dev/jobc/contrib/rabbitmq v0.0.0
	github.com/nats-io/nats.go v1.55.0
	github.com/prometheus/client_golang v1.25.0
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	github.com/schollz/progressbar/v3 v3.19.1
	github.com/spf13/cobra v1.10.2
	github.com/spf13/pflag v1.0.9
	go.yaml.in/yaml/v3 v3.0.6
	golang.org/x/term v0.47.0
)

require (
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/dave/jennifer v1.7.1 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/mitchellh/colorstring v0.0.0-20190213212951-d06e56a500db // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/nats-io/nkeys v0.4.16 // indirect
	github.com/nats-io/nuid v1.0.1 // indirect
	github.com/pierrec/lz4/v4 v4.1.33 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	github.com/prometheus/client_model v0.6.3 // indirect
	github.com/prometheus/common v0.72.0 // indirect
	github.com/prometheus/procfs v0.22.0 // indirect
	github.com/rabbitmq/amqp091-go v1.16.0 // indirect
	github.com/rivo/uniseg v0.4.7 // indirect
	github.com/robfig/cron/v3 v3.0.1 // indirect
	github.com/twmb/franz-go v1.22.3 // indirect
	github.com/twmb/franz-go/pkg/kmsg v1.15.1 // indirect
	golang.org/x/crypto v0.57.0 // indirect
	golang.org/x/sync v0.25.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.44.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

// The CLI is built against the root module of the same checkout, so a change to the
// generator and the CLI lands in one commit and `cd cmd/jobc && go test ./...` needs no
// go.work. Replace directives apply only in this module's own builds: a user's
// `go get -tool github.com/jobc-dev/jobc/cmd/jobc@vX` ignores it and uses the require
// above, so a release sets those requires to the root module's and the contrib modules'
// tags first. (`go install ...@vX` refuses a module with a replace directive; the README
// installs with go get -tool.)
replace github.com/jobc-dev/jobc => ../..

replace github.com/jobc-dev/jobc/contrib/prometheus => ../../contrib/prometheus

replace github.com/jobc-dev/jobc/contrib/nats => ../../contrib/nats

replace github.com/jobc-dev/jobc/contrib/rabbitmq => ../../contrib/rabbitmq

replace github.com/jobc-dev/jobc/contrib/kafka => ../../contrib/kafka
