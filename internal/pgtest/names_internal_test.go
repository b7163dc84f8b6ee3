package pgtest

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestSanitize(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                        "",
		"abc":                     "abc",
		"TestFoo/Sub_Case#01":     "testfoo_sub_case_01",
		"__a--b__":                "a_b",
		"queue.test":              "queue_test",
		"Grüße, Welt!":            "gr_e_welt",
		"ALL_CAPS_123":            "all_caps_123",
		"  spaces   everywhere  ": "spaces_everywhere",
	} {
		if got := sanitize(in); got != want {
			t.Errorf("sanitize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestUniqueName(t *testing.T) {
	t.Parallel()
	for _, prefix := range []string{"", "x", "123abc", "Test/With Spaces", strings.Repeat("Long", 40), strings.Repeat("a_", 40)} {
		name, err := uniqueName(prefix)
		if err != nil {
			t.Fatal(err)
		}
		if !validName(name) {
			t.Errorf("uniqueName(%q) = %q: not a valid name", prefix, name)
		}
		if strings.Contains(name, "__") {
			t.Errorf("uniqueName(%q) = %q: contains __", prefix, name)
		}
		other, err := uniqueName(prefix)
		if err != nil {
			t.Fatal(err)
		}
		if other == name {
			t.Errorf("uniqueName(%q) returned %q twice", prefix, name)
		}
	}
	name, err := uniqueName("Queue")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(name, "queue_") || len(name) != len("queue_")+randomSuffixLen {
		t.Errorf("uniqueName(Queue) = %q, want queue_<%d hex chars>", name, randomSuffixLen)
	}
}

func TestValidName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"t_abc_123":                  true,
		"_x":                         true,
		"":                           false,
		"1abc":                       false,
		"Abc":                        false,
		"a-b":                        false,
		"a;drop":                     false,
		strings.Repeat("a", 63):      true,
		strings.Repeat("a", 64):      false,
		"public, \"$user\"":          false,
		"t_\u00e4":                   false,
		"search_path_with_underscor": true,
	} {
		if got := validName(name); got != want {
			t.Errorf("validName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestConnStringRewrites(t *testing.T) {
	t.Parallel()
	for _, base := range []string{
		"host=/tmp/pgtest-1 port=5555 user=postgres dbname=postgres sslmode=disable",
		"host='/tmp/dir with space' port=5555 user=postgres dbname=postgres options='-c work_mem=8MB'",
		"postgres://postgres:secret@localhost:5432/test?sslmode=disable",
		"postgresql://postgres@/postgres?host=/tmp/pgtest-1&port=5555&options=-c%20work_mem%3D8MB",
	} {
		orig, err := pgconn.ParseConfig(base)
		if err != nil {
			t.Fatalf("%s: %v", base, err)
		}

		withDB, err := withDatabase(base, "other_db")
		if err != nil {
			t.Fatalf("withDatabase(%q): %v", base, err)
		}
		cfg, err := pgconn.ParseConfig(withDB)
		if err != nil {
			t.Fatalf("withDatabase(%q) = %q: %v", base, withDB, err)
		}
		if cfg.Database != "other_db" || cfg.Host != orig.Host || cfg.Port != orig.Port || cfg.User != orig.User || cfg.Password != orig.Password {
			t.Errorf("withDatabase(%q) = %q: parsed as db=%q host=%q port=%d user=%q", base, withDB, cfg.Database, cfg.Host, cfg.Port, cfg.User)
		}

		withSP, err := withSearchPath(withDB, "t_x_1234")
		if err != nil {
			t.Fatalf("withSearchPath(%q): %v", withDB, err)
		}
		cfg, err = pgconn.ParseConfig(withSP)
		if err != nil {
			t.Fatalf("withSearchPath(%q) = %q: %v", withDB, withSP, err)
		}
		opts := cfg.RuntimeParams["options"]
		if !strings.HasSuffix(opts, "-c search_path=t_x_1234") || cfg.Database != "other_db" || cfg.Host != orig.Host {
			t.Errorf("withSearchPath(%q) = %q: parsed as options=%q db=%q host=%q", withDB, withSP, opts, cfg.Database, cfg.Host)
		}
		if prev := orig.RuntimeParams["options"]; prev != "" && !strings.HasPrefix(opts, prev+" ") {
			t.Errorf("withSearchPath(%q) = %q: lost previous options %q", withDB, withSP, prev)
		}
	}
}

func TestCompareVersionPaths(t *testing.T) {
	t.Parallel()
	ordered := []string{
		"/usr/lib/postgresql/bin",
		"/usr/lib/postgresql/9.6/bin",
		"/usr/lib/postgresql/10/bin",
		"/usr/lib/postgresql/15/bin",
		"/usr/lib/postgresql/17/bin",
	}
	for i := range ordered {
		for j := range ordered {
			got := compareVersionPaths(ordered[i], ordered[j])
			if (i < j && got >= 0) || (i > j && got <= 0) || (i == j && got != 0) {
				t.Errorf("compareVersionPaths(%q, %q) = %d", ordered[i], ordered[j], got)
			}
		}
	}
}
