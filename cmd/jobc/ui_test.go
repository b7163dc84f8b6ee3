package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestUIRefusesToStart: on an address other than loopback without authentication, with
// half of the basic-auth credentials, or with a bad prefix, `jobc ui` exits 2 and says
// how to fix it, before touching the database.
func TestUIRefusesToStart(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://nobody@127.0.0.1:1/none")
	for _, c := range []struct {
		args []string
		env  map[string]string
		says []string
	}{
		{[]string{"ui", "--addr", "0.0.0.0:8080"}, nil, []string{"not a loopback address", envUIToken, envUIUser, envUIPassword}},
		{[]string{"ui", "--addr", ":8080"}, nil, []string{"not a loopback address"}},
		{[]string{"ui", "--addr", "192.0.2.10:8080"}, map[string]string{envUIUser: "ops"}, []string{"set both " + envUIUser + " and " + envUIPassword}},
		{[]string{"ui", "--prefix", "jobs/"}, nil, []string{`--prefix "jobs/" must start with /`}},
		{[]string{"ui", "--addr", "nonsense"}, nil, []string{"--addr"}},
		{[]string{"ui", "extra"}, nil, []string{"unknown command"}},
	} {
		for _, k := range []string{envUIToken, envUIUser, envUIPassword} {
			t.Setenv(k, c.env[k])
		}
		_, errOut, code := jobc(t, c.args...)
		if code != exitUsage {
			t.Errorf("jobc %s: exit %d, want %d; stderr:\n%s", strings.Join(c.args, " "), code, exitUsage, errOut)
		}
		for _, s := range c.says {
			if !strings.Contains(errOut, s) {
				t.Errorf("jobc %s: stderr does not say %q:\n%s", strings.Join(c.args, " "), s, errOut)
			}
		}
	}
}

// lockedBuffer is a bytes.Buffer the command writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestUIServes starts `jobc ui` under a prefix on a free loopback port, reads the
// schedules from the example shop's spec (-C), and stops it with its context.
func TestUIServes(t *testing.T) {
	_, url := migratedDB(t)
	for _, k := range []string{envUIToken, envUIUser, envUIPassword} {
		t.Setenv(k, "")
	}
	ctx, cancel := context.WithCancel(t.Context())
	var out, errOut lockedBuffer
	done := make(chan int, 1)
	shop, err := filepath.Abs(filepath.Join("..", "..", "examples", "shop"))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		done <- run(ctx, []string{"ui", "-C", shop, "--addr", "127.0.0.1:0", "--prefix", "/ops/", "--read-only", "--database-url", url}, &out, &errOut)
	}()
	addr := regexp.MustCompile(`serving (http://\S+/ops/) \(read-only\)`)
	var base string
	for deadline := time.Now().Add(30 * time.Second); base == ""; time.Sleep(20 * time.Millisecond) {
		if m := addr.FindStringSubmatch(out.String()); m != nil {
			base = m[1]
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("jobc ui did not say where it serves within 30s; stdout %q, stderr %q", out.String(), errOut.String())
		}
	}
	get := func(u string) (int, string) {
		t.Helper()
		res, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		return res.StatusCode, string(b)
	}
	if status, body := get(base + "periodic"); status != http.StatusOK || !strings.Contains(body, "daily_sales_report") ||
		!strings.Contains(body, "0 6 * * *") || !strings.Contains(body, "purge_expired_carts") {
		t.Errorf("GET %speriodic: %d, want the shop's scheduled jobs:\n%s", base, status, body)
	}
	if status, body := get(base); status != http.StatusOK || !strings.Contains(body, `href="/ops/queues"`) || strings.Contains(body, `method="post"`) {
		t.Errorf("GET %s: %d, want the read-only overview under /ops/:\n%s", base, status, body)
	}
	cancel()
	select {
	case code := <-done:
		if code != exitOK {
			t.Errorf("jobc ui exited %d after its context ended, want 0; stderr:\n%s", code, errOut.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("jobc ui did not stop within 30s of its context ending")
	}
}
