package typescript_test

import (
	"os"
	"strings"
	"testing"

	"github.com/jobc-dev/jobc/generator/internal/codegen/typescript"
)

// TestInvalidPayloadSQLStateMatchesTheLibrary: payloadProblems recognises the error by
// the SQLSTATE that the SQL producers' function library raises (jobc_payload_invalid).
func TestInvalidPayloadSQLStateMatchesTheLibrary(t *testing.T) {
	b, err := os.ReadFile("../../../../schema/library/1_messages.sql")
	if err != nil {
		t.Fatal(err)
	}
	want := "ERRCODE = '" + typescript.InvalidPayloadSQLState + "', DETAIL"
	if !strings.Contains(string(b), want) {
		t.Errorf("schema/library/1_messages.sql does not raise the invalid payload error with %q", want)
	}
}
