package schema

import (
	"strings"
	"testing"
)

func TestGrantsQuoteNamesAndSkipUnnamedRoles(t *testing.T) {
	stmts, err := Grants(`my "jobs"`, Roles{Worker: "Worker Role", ReadOnly: "dash"})
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(stmts, "\n")
	for _, want := range []string{
		`GRANT USAGE ON SCHEMA "my ""jobs""" TO "Worker Role";`,
		`GRANT SELECT, INSERT (kind, queue, state, priority, payload_version, payload, metadata, available_at, max_attempts, flow_key), UPDATE, DELETE ON TABLE "my ""jobs"""."jobc_jobs" TO "Worker Role";`,
		`GRANT USAGE ON SEQUENCE "my ""jobs"""."jobc_jobs_id_seq" TO "Worker Role";`,
		`GRANT SELECT ON TABLE "my ""jobs"""."jobc_jobs_finished" TO "dash";`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("missing %s in:\n%s", want, all)
		}
	}
	for _, s := range stmts {
		if !strings.HasPrefix(s, "GRANT ") || !strings.HasSuffix(s, ";") || strings.Contains(s, "\n") {
			t.Errorf("not one GRANT statement on one line: %q", s)
		}
		if strings.Contains(s, `TO "dash"`) && !strings.HasPrefix(s, "GRANT SELECT ON ") && !strings.HasPrefix(s, "GRANT USAGE ON SCHEMA ") {
			t.Errorf("the read-only role gets more than SELECT: %s", s)
		}
		if strings.Contains(s, "TRUNCATE") || strings.Contains(s, "ALL") || strings.Contains(s, "CREATE") {
			t.Errorf("more than row privileges: %s", s)
		}
	}
	if strings.Contains(all, `TO "";`) {
		t.Errorf("a statement for the unnamed producer role:\n%s", all)
	}
}

func TestGrantsRejectBadRoles(t *testing.T) {
	for _, c := range []struct {
		schema string
		roles  Roles
		want   string
	}{
		{"app", Roles{}, "no role named"},
		{"app", Roles{Worker: "a", ReadOnly: "a"}, `role "a" is named as both the worker and the read-only role`},
		{"app", Roles{Producer: "p", ReadOnly: "p"}, `role "p" is named as both the producer and the read-only role`},
		{"", Roles{Worker: "a"}, "no schema name"},
	} {
		_, err := Grants(c.schema, c.roles)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Grants(%q, %+v): %v, want an error containing %q", c.schema, c.roles, err, c.want)
		}
	}
}

// A SECURITY DEFINER function added by a later migration is one entry in objects();
// its statement names the argument types unquoted.
func TestGrantFunction(t *testing.T) {
	got := grant([]string{"EXECUTE"}, object{kind: "FUNCTION", name: "jobc_finish", args: "bigint[], integer[]"}, "app", `"w"`)
	want := `GRANT EXECUTE ON FUNCTION "app"."jobc_finish"(bigint[], integer[]) TO "w";`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
