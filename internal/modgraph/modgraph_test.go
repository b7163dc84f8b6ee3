package modgraph_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/jobc-dev/jobc/internal/modgraph"
)

// maxRuntimeModules is the budget of issue #8: an application that imports
// only the runtime has at most this many modules in its go.sum. River's root
// module needs about a dozen.
const maxRuntimeModules = 20

// TestRuntimeImporterModules measures the go.sum of a module that imports
// only github.com/jobc-dev/jobc/runtime (what generated code imports), and of
// one whose tests also import jobctest.
func TestRuntimeImporterModules(t *testing.T) {
	t.Parallel()
	for name, imports := range map[string][]string{
		"runtime":          {"github.com/jobc-dev/jobc/runtime"},
		"runtime+jobctest": {"github.com/jobc-dev/jobc/runtime", "github.com/jobc-dev/jobc/jobctest"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			mods, err := modgraph.Importer{Root: "../..", Imports: imports}.SumModules(t.Context(), t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			list := "\n\t" + strings.Join(mods, "\n\t")
			t.Logf("importing %s: go.sum names %d modules:%s", name, len(mods), list)

			// A measurement that found nothing measured nothing.
			if !slices.Contains(mods, "github.com/jackc/pgx/v5") {
				t.Fatalf("go.sum does not name pgx, which the runtime imports; the measurement is broken:%s", list)
			}
			if len(mods) > maxRuntimeModules {
				t.Errorf("importing %s: go.sum names %d modules, more than %d:%s", name, len(mods), maxRuntimeModules, list)
			}
			// What the root module shed: the CLI's dependencies (cmd/jobc is
			// its own module) and testcontainers' (pgtest runs docker
			// through os/exec).
			for _, m := range mods {
				for _, banned := range []string{"github.com/spf13/cobra", "github.com/schollz/progressbar", "github.com/testcontainers/", "go.opentelemetry.io/", "github.com/docker/", "github.com/moby/"} {
					if strings.HasPrefix(m, banned) {
						t.Errorf("importing %s: go.sum names %s", name, m)
					}
				}
			}
		})
	}
}

// maxToolModules is the budget of a module that runs the CLI as a tool (go get
// -tool github.com/jobc-dev/jobc/cmd/jobc, for go generate): what its go.sum names
// besides jobc's own modules. The servers (jobc-relay, jobc-metrics) are modules of
// their own so that the brokers' and Prometheus's libraries stay out of it.
const maxToolModules = 25

// TestToolModules measures the go.sum of a module that declares the CLI as a tool.
func TestToolModules(t *testing.T) {
	t.Parallel()
	mods, err := modgraph.Importer{Root: "../..", Tools: []string{"github.com/jobc-dev/jobc/cmd/jobc"}}.SumModules(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	list := "\n\t" + strings.Join(mods, "\n\t")
	t.Logf("jobc as a tool: go.sum names %d modules:%s", len(mods), list)
	for _, want := range []string{"github.com/jackc/pgx/v5", "github.com/spf13/cobra"} {
		if !slices.Contains(mods, want) {
			t.Fatalf("go.sum does not name %s, which the CLI imports; the measurement is broken:%s", want, list)
		}
	}
	if len(mods) > maxToolModules {
		t.Errorf("jobc as a tool: go.sum names %d modules, more than %d:%s", len(mods), maxToolModules, list)
	}
	for _, m := range mods {
		for _, banned := range []string{"github.com/nats-io/", "github.com/rabbitmq/", "github.com/twmb/", "github.com/prometheus/", "google.golang.org/protobuf", "github.com/jobc-dev/"} {
			if strings.HasPrefix(m, banned) {
				t.Errorf("jobc as a tool: go.sum names %s", m)
			}
		}
	}
}

func TestParseSum(t *testing.T) {
	t.Parallel()
	mods, err := modgraph.ParseSum([]byte(`github.com/jackc/pgx/v5 v5.12.0 h1:AAAA=
github.com/jackc/pgx/v5 v5.12.0/go.mod h1:BBBB=

golang.org/x/text v0.44.0/go.mod h1:CCCC=
github.com/davecgh/go-spew v1.1.0/go.mod h1:DDDD=
github.com/davecgh/go-spew v1.1.1/go.mod h1:EEEE=
`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(mods, " "), "github.com/davecgh/go-spew github.com/jackc/pgx/v5 golang.org/x/text"; got != want {
		t.Errorf("ParseSum = %s, want %s", got, want)
	}

	_, err = modgraph.ParseSum([]byte("a v1 h1:x=\nnot a go.sum line\n"))
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("ParseSum of a bad line: err = %v, want one naming line 2", err)
	}
}
