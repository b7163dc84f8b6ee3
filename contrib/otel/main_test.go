package jobcotel_test

import (
	"testing"

	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/internal/testkit"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// payload is the jobs' payload in these tests.
type payload = testkit.Number
