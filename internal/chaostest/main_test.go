//go:build unix

package chaostest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/internal/pgtest"
)

// buildTimeout bounds building the testworker binary.
const buildTimeout = 3 * time.Minute

// binaries is what TestMain prepares for every test. It is written once, before any
// test runs, and only read afterwards.
var binaries struct {
	worker string // path of the testworker binary
	// janitorPipe is the write end of the pipe the janitor waits on; see startJanitor.
	// It is kept here so that it is not closed (by its finalizer) before the process
	// exits.
	janitorPipe *os.File
}

func TestMain(m *testing.M) {
	if err := buildWorker(); err != nil {
		fmt.Fprintf(os.Stderr, "chaostest: %v\n", err)
		os.Exit(1)
	}
	pgtest.Main(m)
}

// buildWorker builds internal/cmd/testworker into a temp dir that a janitor process
// removes when this test binary exits: pgtest.Main ends with os.Exit, so no deferred
// cleanup of ours would run.
func buildWorker() error {
	dir, err := os.MkdirTemp("", "jobc-chaostest-")
	if err != nil {
		return fmt.Errorf("create a temp dir for the testworker binary: %w", err)
	}
	pipe, err := startJanitor(dir)
	if err != nil {
		return errors.Join(err, os.RemoveAll(dir))
	}
	binaries.janitorPipe = pipe
	bin := filepath.Join(dir, "testworker")
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	// go test puts its own go command first on PATH.
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/jobc-dev/jobc/internal/cmd/testworker")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build testworker: %w\n%s", err, out)
	}
	binaries.worker = bin
	return nil
}

// janitorScript waits until its stdin reaches end of file, which happens when the
// process holding the pipe's write end exits, however it exits, and then removes dir.
const janitorScript = `trap '' HUP INT QUIT TERM PIPE
read -r _ || :
rm -rf "$1"
`

// startJanitor starts a process that removes dir once this process has exited, and
// returns the pipe that keeps it waiting.
func startJanitor(dir string) (*os.File, error) {
	r, w, err := os.Pipe() // close-on-exec: worker processes do not inherit w
	if err != nil {
		return nil, fmt.Errorf("janitor: %w", err)
	}
	cmd := exec.Command("/bin/sh", "-c", janitorScript, "chaostest-janitor", dir)
	cmd.Stdin = r
	cmd.Dir = "/"
	// Its own process group: a Ctrl-C of the test run must not stop it first.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("janitor: %w", errors.Join(err, r.Close(), w.Close()))
	}
	if err := r.Close(); err != nil {
		return nil, fmt.Errorf("janitor: %w", errors.Join(err, w.Close()))
	}
	go func() { _ = cmd.Wait() }() // reap it should it end early
	return w, nil
}
