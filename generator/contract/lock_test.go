package contract_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobc-dev/jobc/generator/contract"
	"github.com/jobc-dev/jobc/generator/spec"
)

// TestLockGolden pins the lock file's layout: testdata/lock/jobc.lock is what `jobc
// lock` writes for testdata/lock. JOBC_UPDATE_GOLDEN=1 rewrites it.
func TestLockGolden(t *testing.T) {
	dir := filepath.Join("testdata", "lock")
	p, err := spec.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	l, err := contract.Lock(p)
	if err != nil {
		t.Fatal(err)
	}
	got, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join(dir, contract.LockName)
	if os.Getenv("JOBC_UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("lock file differs from %s (JOBC_UPDATE_GOLDEN=1 rewrites it):\n%s", golden, got)
	}

	// Reading it back gives the same file, and the spec it was made from passes.
	back, err := contract.LoadLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	again, err := back.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, want) {
		t.Errorf("LoadLock then Marshal changed the file:\n%s", again)
	}
	fs, err := contract.Verify(p, back)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 0 {
		t.Errorf("findings against its own lock:\n%s", strings.Join(lines(t, fs), "\n"))
	}
}

func TestWriteLock(t *testing.T) {
	dir := t.TempDir()
	p := loadIn(t, dir, "  a:\n    payload: {versions: {1: {schema: {type: object}}}}\n", nil)
	if _, err := contract.LoadLock(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("LoadLock without a lock file: %v, want fs.ErrNotExist", err)
	}
	l, err := contract.Lock(p)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := contract.WriteLock(dir, l); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if got := strings.Join(names, " "); got != "jobc.lock jobc.yaml" {
		t.Errorf("files after WriteLock: %s; want jobc.lock jobc.yaml and no temporary file", got)
	}
	b, err := os.ReadFile(filepath.Join(dir, contract.LockName))
	if err != nil {
		t.Fatal(err)
	}
	const want = `{
  "jobc_lock": 1,
  "jobs": {
    "a": {
      "write_version": 1,
      "versions": [
        {
          "version": 1,
          "sha256": "a2c799262a3ce3c19ef5cdd983bf3d12b43ab3c426227091b909dcb7054738c0",
          "schema": {
            "type": "object"
          }
        }
      ]
    }
  }
}
`
	if string(b) != want {
		t.Errorf("jobc.lock:\n%s\nwant:\n%s", b, want)
	}
}

// TestParseLockErrors: a damaged lock file is reported at the place of the damage.
func TestParseLockErrors(t *testing.T) {
	const good = `{
  "jobc_lock": 1,
  "jobs": {
    "a": {
      "write_version": 1,
      "versions": [
        {
          "version": 1,
          "sha256": "a2c799262a3ce3c19ef5cdd983bf3d12b43ab3c426227091b909dcb7054738c0",
          "schema": {
            "type": "object"
          }
        }
      ]
    }
  }
}
`
	cases := []struct {
		name     string
		old, new string
		want     string
	}{
		{"not JSON", `"jobs": {`, `"jobs": {,`, "jobc.lock:3:12: invalid lock file: invalid character ',' looking for beginning of object key string: restore it from version control or run `jobc lock`"},
		{"unknown field", `"write_version"`, `"writes"`, "jobc.lock:1:1: invalid lock file: unknown field \"writes\": restore it from version control or run `jobc lock`"},
		{"newer format", `"jobc_lock": 1`, `"jobc_lock": 2`, "jobc.lock:1:1: jobc_lock: unsupported lock format 2: this jobc reads format 1"},
		{"schema edited by hand", `"object"`, `"string"`, "jobc.lock:7:9: jobs.a.versions.0.sha256: the hash does not match the schema recorded with it: the lock file was edited by hand; restore it from version control"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := strings.Replace(good, c.old, c.new, 1)
			if b == good {
				t.Fatalf("%q not in the lock file", c.old)
			}
			_, err := contract.ParseLock(contract.LockName, []byte(b))
			if err == nil || err.Error() != c.want {
				t.Errorf("error:\n%v\nwant:\n%s", err, c.want)
			}
		})
	}
	if _, err := contract.ParseLock(contract.LockName, []byte(good)); err != nil {
		t.Errorf("the good lock file: %v", err)
	}
}

// TestLoadLockStaysInsideTheProject: a jobc.lock that is a link to a file outside the
// project is refused, without quoting that file (a JSON error would: `unknown field`).
func TestLoadLockStaysInsideTheProject(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "proj")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	const secret = "SECRET_9f1d2a"
	if err := os.WriteFile(filepath.Join(base, "creds.json"), []byte(`{"`+secret+`": 1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../creds.json", filepath.Join(dir, contract.LockName)); err != nil {
		t.Fatal(err)
	}
	_, err := contract.LoadLock(dir)
	const want = "jobc: read jobc.lock: jobc.lock is a symbolic link to a place outside the project"
	if err == nil || err.Error() != want {
		t.Errorf("LoadLock: %v, want %s", err, want)
	}
	if err != nil && strings.Contains(err.Error(), secret) {
		t.Errorf("the error quotes the file outside the project: %v", err)
	}
}
