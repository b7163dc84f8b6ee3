package dberr

import (
	"testing"

	"github.com/jobc-dev/jobc/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }
