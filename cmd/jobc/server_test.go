package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServerDispatch: `jobc relay ARGS` and `jobc metrics ARGS` run jobc-relay and
// jobc-metrics with ARGS (-C given before the command included, --help passed on) and
// exit with their status; a server that is not installed exits 127 saying how to
// install it.
func TestServerDispatch(t *testing.T) {
	bin := t.TempDir()
	for _, name := range []string{"jobc-relay", "jobc-metrics"} {
		script := "#!/bin/sh\necho " + name + " \"$@\"\nexit 3\n"
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("GOBIN", t.TempDir()) // not the developer's own jobc-relay
	t.Setenv("PATH", bin)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-C", "proj", "relay", "--to", "nats://127.0.0.1:4222", "--help"}, "jobc-relay -C proj --to nats://127.0.0.1:4222 --help\n"},
		{[]string{"relay", "failed", "--json"}, "jobc-relay failed --json\n"},
		{[]string{"metrics", "--addr", "127.0.0.1:0"}, "jobc-metrics --addr 127.0.0.1:0\n"},
	} {
		out, errOut, code := jobc(t, c.args...)
		if out != c.want || code != 3 || errOut != "" {
			t.Errorf("jobc %s: exit %d, stdout %q, stderr %q; want exit 3 and %q", strings.Join(c.args, " "), code, out, errOut, c.want)
		}
	}

	t.Setenv("PATH", t.TempDir())
	for _, name := range []string{"relay", "metrics"} {
		_, errOut, code := jobc(t, name, "--help")
		want := "go install github.com/jobc-dev/jobc/cmd/jobc-" + name + "@"
		if code != exitNotInstalled || !strings.Contains(errOut, "jobc-"+name+" is not installed") || !strings.Contains(errOut, want) {
			t.Errorf("jobc %s without jobc-%s: exit %d, stderr %q; want exit %d and %q", name, name, code, errOut, exitNotInstalled, want)
		}
	}
}
