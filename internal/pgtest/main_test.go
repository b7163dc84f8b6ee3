package pgtest_test

import (
	"os"
	"testing"

	"github.com/jobc-dev/jobc/internal/pgtest"
)

func TestMain(m *testing.M) {
	if os.Getenv(watchdogChildEnv) != "" {
		os.Exit(watchdogChild())
	}
	pgtest.Main(m)
}
