package brokertest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// NATS is a throwaway nats-server with JetStream, its store in a temporary directory.
type NATS struct {
	URL string // nats://127.0.0.1:<port>
	srv *server
}

// NATSURL returns NATS_URL when it is set, and otherwise the URL of a throwaway
// server started for the test (StartNATS).
func NATSURL(t testing.TB) string {
	t.Helper()
	if u := os.Getenv("NATS_URL"); u != "" {
		return u
	}
	return StartNATS(t).URL
}

// StartNATS starts `nats-server -js` on a free port of 127.0.0.1 with its store in a
// temporary directory and the given configuration lines (e.g. "max_payload: 4096") in
// its configuration file, and stops it when the test ends. The binary is found in
// PATH or /usr/sbin, or named by JOBC_NATS_SERVER.
func StartNATS(t testing.TB, config ...string) *NATS {
	t.Helper()
	bin, err := lookBinary("NATS_URL", "install nats-server (Debian: apt-get install nats-server)",
		append(envCandidate("JOBC_NATS_SERVER"), "nats-server", "/usr/sbin/nats-server", "/usr/bin/nats-server")...)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	port := freePorts(t, 1)[0]
	conf := filepath.Join(dir, "nats-server.conf")
	if err := os.WriteFile(conf, []byte(strings.Join(config, "\n")+"\n"), 0o644); err != nil {
		t.Fatalf("brokertest: %v", err)
	}
	argv := []string{bin, "-c", conf, "-js", "-sd", filepath.Join(dir, "store"), "-a", "127.0.0.1", "-p", strconv.Itoa(port)}
	n := &NATS{URL: fmt.Sprintf("nats://127.0.0.1:%d", port),
		srv: &server{name: "nats-server", argv: argv, dir: dir, port: port, log: filepath.Join(dir, "nats-server.log")}}
	startServer(t, n.srv)
	return n
}

// Restart stops the server (SIGTERM: JetStream flushes its store), leaves it down for
// down, and starts it again on the same port with the same store.
func (n *NATS) Restart(ctx context.Context, down time.Duration) error {
	return n.srv.restart(ctx, down)
}

// envCandidate returns the binary named by the environment variable, if set.
func envCandidate(name string) []string {
	if p := os.Getenv(name); p != "" {
		return []string{p}
	}
	return nil
}
