package jobcprom_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/internal/testkit"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// payload is the jobs' payload in these tests.
type payload = testkit.Number

// series names a series as the text format writes it, labels in the order given
// (the client writes them sorted by name).
func series(name string, labels ...string) string {
	if len(labels) == 0 {
		return name
	}
	var b strings.Builder
	b.WriteString(name + "{")
	for i := 0; i < len(labels); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s=%q", labels[i], labels[i+1])
	}
	b.WriteByte('}')
	return b.String()
}
