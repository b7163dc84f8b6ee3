package typescript_test

import (
	"os"
	"strings"
	"testing"

	"github.com/jobc-dev/jobc/generator/internal/codegen/typescript"
)

// TestInvalidPayloadSQLStateIsTheMigrations: payloadProblems recognises the error by
// the SQLSTATE that the SQL producers' shared functions raise.
func TestInvalidPayloadSQLStateIsTheMigrations(t *testing.T) {
	b, err := os.ReadFile("../../../../schema/0007_sql_producers.sql")
	if err != nil {
		t.Fatal(err)
	}
	want := "ERRCODE = '" + typescript.InvalidPayloadSQLState + "', DETAIL"
	if !strings.Contains(string(b), want) {
		t.Errorf("schema/0007_sql_producers.sql does not raise the invalid payload error with %q", want)
	}
}
