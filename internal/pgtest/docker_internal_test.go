package pgtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// The Docker fallback is exercised with a fake docker command: a shell
// script that records its arguments and answers like the real one. Docker is
// not available where these tests run, and what can break here is the
// command line pgtest builds and how it reads the answers.

const fakeContainerID = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"

type fakeDocker struct {
	bin string // path of the script
	log string // one line per invocation: its arguments
}

// newFakeDocker writes a fake docker command. daemonUp decides whether
// "docker info" succeeds; portOut is what "docker port" prints.
func newFakeDocker(t *testing.T, daemonUp bool, portOut string) fakeDocker {
	t.Helper()
	dir := t.TempDir()
	f := fakeDocker{bin: filepath.Join(dir, "docker"), log: filepath.Join(dir, "calls.log")}
	info := `echo 27.3.1`
	if !daemonUp {
		info = `echo "Cannot connect to the Docker daemon at unix:///var/run/docker.sock." >&2; exit 1`
	}
	script := fmt.Sprintf(`#!/bin/sh
printf '%%s\n' "$*" >> %s
case "$1" in
info) %s ;;
run) echo "Unable to find image locally" >&2; echo %s ;;
port) printf '%%s' %s ;;
logs) echo "fake server log line" ;;
rm) echo %s ;;
*) echo "fake docker: unexpected command: $*" >&2; exit 2 ;;
esac
`, shellQuote(f.log), info, fakeContainerID, shellQuote(portOut), fakeContainerID)
	writeScript(t, f.bin, script)
	return f
}

// writeScript creates an executable script at path without this process ever
// holding it open for writing. A file this process writes can fail to run with
// ETXTBSY, "text file busy", when a parallel test forks while the file is open:
// the child holds the inherited descriptor until it calls exec (golang/go#22315).
// So sh writes it.
func writeScript(t *testing.T, path, script string) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", `cat > "$1" && chmod 755 "$1"`, "sh", path)
	cmd.Stdin = strings.NewReader(script)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("write %s: %v: %s", path, err, out)
	}
}

// calls returns the recorded invocations.
func (f fakeDocker) calls(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(f.log)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

func testDockerCLI(bin string) dockerCLI {
	return dockerCLI{bin: bin, log: slog.New(slog.DiscardHandler)}
}

func TestDockerRunArgs(t *testing.T) {
	t.Parallel()
	got := strings.Join(dockerRunArgs("postgres:16"), " ")
	want := "run --detach --rm --label jobc.pgtest=1 --publish 127.0.0.1::5432 " +
		"--env POSTGRES_HOST_AUTH_METHOD=trust --env POSTGRES_DB=postgres " +
		"postgres:16 -c fsync=off -c full_page_writes=off -c max_connections=400"
	if got != want {
		t.Errorf("dockerRunArgs:\n got %s\nwant %s", got, want)
	}
}

func TestDockerMissing(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "docker")
	_, err := testDockerCLI(missing).start(t.Context(), "")
	if !errors.Is(err, errDockerUnavailable) {
		t.Fatalf("start with no docker command: err = %v, want errDockerUnavailable", err)
	}
	if !strings.Contains(err.Error(), missing) {
		t.Errorf("error %q does not name the missing command %s", err, missing)
	}
}

func TestDockerDaemonDown(t *testing.T) {
	t.Parallel()
	f := newFakeDocker(t, false, "")
	_, err := testDockerCLI(f.bin).start(t.Context(), "")
	if !errors.Is(err, errDockerUnavailable) {
		t.Fatalf("start with the daemon down: err = %v, want errDockerUnavailable", err)
	}
	if !strings.Contains(err.Error(), "Cannot connect to the Docker daemon") {
		t.Errorf("error %q does not include docker's message", err)
	}
	if calls := f.calls(t); len(calls) != 1 || !strings.HasPrefix(calls[0], "info ") {
		t.Errorf("docker calls = %q, want only docker info", calls)
	}
}

func TestDockerStartAndStop(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c, err := StartCluster(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Destroy(context.Background()) })
	// The "container" is the cluster behind a TCP port, as docker publishes it.
	port := tcpProxy(t, filepath.Join(c.dir, ".s.PGSQL."+strconv.Itoa(c.port)))
	f := newFakeDocker(t, true, fmt.Sprintf("0.0.0.0:%d\n[::]:%d\n", port, port))

	srv, err := testDockerCLI(f.bin).start(ctx, "postgres:16")
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	conn, err := pgx.Connect(ctx, srv.ConnString())
	if err != nil {
		t.Fatalf("connect to %s: %v", srv.ConnString(), err)
	}
	var user string
	if err := conn.QueryRow(ctx, "SELECT current_user").Scan(&user); err != nil {
		t.Fatal(err)
	}
	_ = conn.Close(ctx)
	if user != "postgres" {
		t.Errorf("current_user = %q, want postgres", user)
	}
	if !strings.Contains(srv.String(), fakeContainerID) || !strings.Contains(srv.String(), "postgres:16") {
		t.Errorf("String() = %q, want the container id and image", srv)
	}

	if err := srv.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := srv.Stop(ctx); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	want := []string{
		"info --format {{.ServerVersion}}",
		strings.Join(dockerRunArgs("postgres:16"), " "),
		"port " + fakeContainerID + " 5432/tcp",
		"rm --force --volumes " + fakeContainerID,
	}
	if got := f.calls(t); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("docker calls:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestDockerNotReadyRemovesContainer(t *testing.T) {
	t.Parallel()
	closed, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	f := newFakeDocker(t, true, fmt.Sprintf("127.0.0.1:%d\n", closed))
	d := testDockerCLI(f.bin)
	d.readyTimeout = 10 * dockerReadyPoll

	_, err = d.start(t.Context(), "")
	if err == nil {
		t.Fatal("start succeeded with nothing listening on the published port")
	}
	if errors.Is(err, errDockerUnavailable) {
		t.Errorf("err = %v: a container that does not come up is an error, not a missing Docker", err)
	}
	for _, want := range []string{fakeContainerID, DefaultDockerImage, "did not accept connections", "fake server log line"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	calls := f.calls(t)
	if last := calls[len(calls)-1]; last != "rm --force --volumes "+fakeContainerID {
		t.Errorf("last docker call = %q, want the container removed; all calls: %q", last, calls)
	}
}

func TestDockerWatchdogRemovesContainer(t *testing.T) {
	t.Parallel()
	f := newFakeDocker(t, true, "")
	ctr := &container{docker: testDockerCLI(f.bin), bin: f.bin, id: fakeContainerID}
	if err := ctr.startWatchdog(); err != nil {
		t.Fatal(err)
	}
	// Closing the write end is what the kernel does when this process dies.
	if err := ctr.watchdogPipe.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ctr.watchdog.Wait(); err != nil {
		t.Fatalf("watchdog: %v", err)
	}
	if got, want := f.calls(t), "rm --force --volumes "+fakeContainerID; len(got) != 1 || got[0] != want {
		t.Errorf("docker calls = %q, want [%q]", got, want)
	}
}

func TestParseDockerPort(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		out, host, port, err string
	}{
		{out: "127.0.0.1:49153\n", host: "127.0.0.1", port: "49153"},
		{out: "0.0.0.0:32768\n[::]:32768\n", host: "127.0.0.1", port: "32768"},
		{out: "\n[::1]:5000\n", host: "::1", port: "5000"},
		{out: "", err: "no published port"},
		{out: "Error: No public port '5432/tcp' published\n", err: "docker port"},
	} {
		host, port, err := parseDockerPort([]byte(tc.out))
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("parseDockerPort(%q): err = %v, want %q", tc.out, err, tc.err)
			}
		case err != nil:
			t.Errorf("parseDockerPort(%q): %v", tc.out, err)
		case host != tc.host || port != tc.port:
			t.Errorf("parseDockerPort(%q) = %s, %s; want %s, %s", tc.out, host, port, tc.host, tc.port)
		}
	}
}

// tcpProxy forwards connections on a loopback TCP port to the unix socket
// and returns the port.
func tcpProxy(t *testing.T, socket string) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		_ = l.Close()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			out, err := net.DialTimeout("unix", socket, 5*time.Second)
			if err != nil {
				_ = in.Close()
				continue
			}
			wg.Add(2)
			pipe := func(dst, src net.Conn) {
				defer wg.Done()
				_, _ = io.Copy(dst, src)
				_ = dst.Close()
				_ = src.Close()
			}
			go pipe(in, out)
			go pipe(out, in)
		}
	}()
	return l.Addr().(*net.TCPAddr).Port
}
