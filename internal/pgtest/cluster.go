package pgtest

import (
	"bytes"
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
	"time"
)

// maxSocketBase bounds the length of the directory the cluster's temp
// directory is created in: the unix socket (and its lock file) live in the
// temp directory, and socket paths are limited to about 104 bytes.
const maxSocketBase = 60

// logTailLines is how many lines of the server log failures include.
const logTailLines = 30

// destroyTimeout bounds the cleanup after a failed start.
const destroyTimeout = 30 * time.Second

// watchdogScript runs alongside every cluster, reading its stdin: a pipe whose
// only write end is held by the process that started the cluster. When that
// process exits for any reason (including a panic on a test timeout or
// SIGKILL), the kernel closes the write end, read returns, and the script
// stops the server and removes the temp directory. A regular
// [Cluster.Destroy] kills the watchdog instead. The script ignores terminal
// signals and runs in its own process group so that Ctrl-C does not kill it
// before it has done its job. Arguments: pg_ctl, data dir, temp dir.
const watchdogScript = `trap '' HUP INT QUIT TERM PIPE
read -r _ || :
"$1" -D "$2" -m immediate stop >/dev/null 2>&1
rm -rf "$3"
`

// Cluster is a throwaway PostgreSQL cluster started from the local server
// binaries. It listens only on a unix socket inside its private temp
// directory, trusts every local connection, and runs with fsync and
// full_page_writes off: it is fast and keeps committed data across a crash or
// immediate shutdown of the server, but not across a crash of the machine, so
// it must never hold data worth keeping.
//
// When the test process runs as root, the server runs as user postgres (or
// nobody), since initdb and postgres refuse to run as root.
//
// Call [Cluster.Destroy] when done. If the process dies without doing so, a
// small watchdog process (see watchdogScript) stops the server and removes
// its files, so a killed or timed-out test does not leave a server running.
//
// A Cluster is safe for concurrent use.
type Cluster struct {
	bin     Binaries
	acct    *account
	log     *slog.Logger
	dir     string // private temp directory; also the unix socket directory
	dataDir string
	logFile string
	port    int

	mu           sync.Mutex
	destroyed    bool
	watchdog     *exec.Cmd
	watchdogPipe *os.File
}

// StartCluster initializes and starts a throwaway cluster from the server
// binaries found by the zero [Finder].
func StartCluster(ctx context.Context) (*Cluster, error) {
	return Config{}.StartCluster(ctx)
}

// StartCluster initializes and starts a throwaway cluster from the server
// binaries found by cfg.Finder.
func (cfg Config) StartCluster(ctx context.Context) (*Cluster, error) {
	bin, err := cfg.Finder.find()
	if err != nil {
		return nil, fmt.Errorf("pgtest: start cluster: %w", err)
	}
	c, err := startCluster(ctx, bin, cfg.logger())
	if err != nil {
		return nil, fmt.Errorf("pgtest: start cluster: %w", err)
	}
	return c, nil
}

// newCluster makes a Cluster in a new temp directory under base, on a free port; nothing
// runs there yet.
func newCluster(base, prefix string, bin Binaries, acct *account, log *slog.Logger) (*Cluster, error) {
	dir, err := os.MkdirTemp(base, prefix)
	if err != nil {
		return nil, fmt.Errorf("create temp dir: %w", err)
	}
	port, err := freePort()
	if err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	return &Cluster{
		bin:     bin,
		acct:    acct,
		log:     log,
		dir:     dir,
		dataDir: filepath.Join(dir, "data"),
		logFile: filepath.Join(dir, "postgres.log"),
		port:    port,
	}, nil
}

// startCluster creates the temp directory, runs initdb and starts the server.
// On failure everything is cleaned up again.
func startCluster(ctx context.Context, bin Binaries, log *slog.Logger) (_ *Cluster, err error) {
	began := time.Now()
	acct, err := serverAccount()
	if err != nil {
		return nil, err
	}
	base := os.TempDir()
	if len(base) > maxSocketBase || (acct != nil && !othersCanTraverse(base)) {
		base = "/tmp"
	}
	c, err := newCluster(base, "pgtest-", bin, acct, log)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), destroyTimeout)
			defer cancel()
			if derr := c.Destroy(dctx); derr != nil {
				err = errors.Join(err, derr)
			}
		}
	}()
	if err := acct.chown(c.dir); err != nil {
		return nil, err
	}
	if err := c.startWatchdog(); err != nil {
		return nil, err
	}
	out, err := c.run(ctx, bin.Initdb(),
		"-D", c.dataDir,
		"--auth=trust",
		"--username=postgres",
		"--no-sync",
		"-E", "UTF8",
		"--locale=C",
	)
	if err != nil {
		return nil, fmt.Errorf("initdb (as %s): %w\n%s", acct, err, tail(out, logTailLines))
	}
	initialized := time.Now()
	if err := c.start(ctx); err != nil {
		return nil, err
	}
	log.Info("pgtest: started throwaway PostgreSQL cluster",
		"dir", c.dir, "bin", bin.Dir, "as", acct.String(),
		"initdb", initialized.Sub(began).Round(time.Millisecond),
		"total", time.Since(began).Round(time.Millisecond))
	return c, nil
}

// ConnString returns a keyword/value connection string for database postgres
// as superuser postgres over the cluster's unix socket.
func (c *Cluster) ConnString() string {
	return keywordValue(
		"host", c.dir,
		"port", strconv.Itoa(c.port),
		"user", "postgres",
		"dbname", "postgres",
		"sslmode", "disable",
	)
}

// Stop shuts the server down (pg_ctl stop -m fast) and keeps its data, so
// that [Cluster.Start] can bring it back. Stopping a stopped cluster is a
// no-op.
func (c *Cluster) Stop(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.destroyed {
		return errors.New("pgtest: stop cluster: cluster was destroyed")
	}
	if err := c.stop(ctx, "fast"); err != nil {
		return fmt.Errorf("pgtest: stop cluster: %w", err)
	}
	return nil
}

// Start starts a stopped cluster again, on the same socket and port and with
// the same data.
func (c *Cluster) Start(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.destroyed {
		return errors.New("pgtest: start cluster: cluster was destroyed")
	}
	if err := c.start(ctx); err != nil {
		return fmt.Errorf("pgtest: start cluster: %w", err)
	}
	return nil
}

// Restart restarts the server with pg_ctl restart -m immediate: the server
// is stopped without a shutdown checkpoint, all sessions are cut off, and it
// goes through crash recovery on the way up. Committed data survives.
func (c *Cluster) Restart(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.destroyed {
		return errors.New("pgtest: restart cluster: cluster was destroyed")
	}
	out, err := c.pgCtl(ctx, "restart", "-m", "immediate", "-l", c.logFile, "-o", c.serverOptions())
	if err != nil {
		return fmt.Errorf("pgtest: restart cluster: %w", c.failure(err, out))
	}
	return nil
}

// Destroy stops the server (pg_ctl stop -m immediate) and removes the temp
// directory with all data. Destroying a destroyed cluster is a no-op.
func (c *Cluster) Destroy(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.destroyed {
		return nil
	}
	c.destroyed = true
	var errs []error
	if err := c.stop(ctx, "immediate"); err != nil {
		errs = append(errs, err)
	}
	c.stopWatchdog()
	if err := os.RemoveAll(c.dir); err != nil {
		errs = append(errs, fmt.Errorf("remove temp dir: %w", err))
	}
	if len(errs) > 0 {
		return fmt.Errorf("pgtest: destroy cluster: %w", errors.Join(errs...))
	}
	c.log.Debug("pgtest: destroyed throwaway PostgreSQL cluster", "dir", c.dir)
	return nil
}

// String describes the cluster for log messages.
func (c *Cluster) String() string {
	return fmt.Sprintf("throwaway cluster in %s (binaries in %s, running as %s)", c.dir, c.bin.Dir, c.acct)
}

// start runs pg_ctl start and waits until the server accepts connections.
func (c *Cluster) start(ctx context.Context) error {
	out, err := c.pgCtl(ctx, "start", "-l", c.logFile, "-o", c.serverOptions())
	if err != nil {
		return c.failure(err, out)
	}
	return nil
}

// stop runs pg_ctl stop in the given mode. A server that is not running is
// not an error.
func (c *Cluster) stop(ctx context.Context, mode string) error {
	out, err := c.pgCtl(ctx, "stop", "-m", mode)
	if err == nil {
		return nil
	}
	if running, serr := c.running(ctx); serr == nil && !running {
		return nil
	}
	return c.failure(err, out)
}

// running reports whether the server is running according to pg_ctl status.
func (c *Cluster) running(ctx context.Context) (bool, error) {
	_, err := c.pgCtl(ctx, "status")
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &exitErr) && (exitErr.ExitCode() == 3 || exitErr.ExitCode() == 4):
		// 3: not running; 4: no accessible data directory.
		return false, nil
	default:
		return false, err
	}
}

// serverOptions are the postgres command line options passed via pg_ctl -o;
// pg_ctl hands them to a shell, hence the quoting.
//
// fsync=off and full_page_writes=off only matter when the OS crashes, which
// a throwaway cluster does not survive anyway. synchronous_commit stays on on
// purpose: with it off, a commit returns before its WAL is even handed to the
// kernel, so Restart (an immediate shutdown, like a crash) or killing the
// server would lose transactions that were reported as committed, and tests
// of crash behaviour would flake. With fsync off, a synchronous commit is
// just a write(2) and costs next to nothing.
//
// max_connections is 400: the process-level tests of flow control run four worker
// processes of fifty handlers each beside the other packages' tests, and the server's
// lock table, which the claims' advisory locks of flow keys use, grows with it.
func (c *Cluster) serverOptions() string {
	return fmt.Sprintf("-k %s -c listen_addresses='' -p %d -c fsync=off -c full_page_writes=off -c max_connections=400",
		shellQuote(c.dir), c.port)
}

// pgCtl runs pg_ctl with the data directory and -w, then args.
func (c *Cluster) pgCtl(ctx context.Context, action string, args ...string) ([]byte, error) {
	all := append([]string{"-D", c.dataDir, "-w"}, args...)
	all = append(all, action)
	return c.run(ctx, c.bin.PgCtl(), all...)
}

// run runs a server binary as the server account and returns its combined
// output.
func (c *Cluster) run(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = c.dir
	cmd.Env = serverEnv()
	c.acct.configure(cmd, false)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	// pg_ctl start forks the postmaster; it redirects the postmaster's output
	// to the log file, but never wait long for inherited pipes regardless.
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if err != nil {
		err = fmt.Errorf("%s %s: %w", filepath.Base(name), strings.Join(args, " "), err)
	}
	return out.Bytes(), err
}

// failure decorates a pg_ctl error with its output and the tail of the
// server log.
func (c *Cluster) failure(err error, out []byte) error {
	var b strings.Builder
	if s := strings.TrimSpace(string(out)); s != "" {
		b.WriteString("\n")
		b.WriteString(s)
	}
	if logTail, rerr := tailFile(c.logFile, logTailLines); rerr == nil && logTail != "" {
		fmt.Fprintf(&b, "\nserver log %s (last lines):\n%s", c.logFile, logTail)
	}
	return fmt.Errorf("%w%s", err, b.String())
}

// startWatchdog starts the process that cleans up when this process dies;
// see watchdogScript.
func (c *Cluster) startWatchdog() error {
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("watchdog: %w", err)
	}
	cmd := exec.Command("/bin/sh", "-c", watchdogScript, "pgtest-watchdog", c.bin.PgCtl(), c.dataDir, c.dir)
	cmd.Stdin = r
	cmd.Dir = "/"
	cmd.Env = serverEnv()
	c.acct.configure(cmd, true)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("watchdog: %w", errors.Join(err, r.Close(), w.Close()))
	}
	// Only the watchdog holds the read end now; this process holds the write
	// end (close-on-exec, so no other child inherits it) until Destroy.
	_ = r.Close()
	c.watchdog, c.watchdogPipe = cmd, w
	return nil
}

// stopWatchdog kills the watchdog without letting it act.
func (c *Cluster) stopWatchdog() {
	if c.watchdog == nil {
		return
	}
	_ = c.watchdog.Process.Kill()
	_ = c.watchdogPipe.Close()
	_ = c.watchdog.Wait()
	c.watchdog, c.watchdogPipe = nil, nil
}

// serverEnv is the environment for server processes: the current one minus
// libpq/server variables (PGDATA, PGPORT, PGOPTIONS, ...) that could change
// what the commands do, with C locale messages.
func serverEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "PG") || strings.HasPrefix(kv, "LC_") || strings.HasPrefix(kv, "LANG=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "LC_ALL=C")
}

// freePort returns a TCP port that is currently free on the loopback
// interface. The cluster does not listen on TCP, but the port number names
// its socket file and shared memory key, and a free one keeps it from
// colliding with anything else.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pick a port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		return 0, fmt.Errorf("pick a port: %w", err)
	}
	return port, nil
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// tailFile returns the last n lines of the file at path.
func tailFile(path string, n int) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	const maxRead = 16 << 10
	if fi, err := f.Stat(); err == nil && fi.Size() > maxRead {
		if _, err := f.Seek(-maxRead, io.SeekEnd); err != nil {
			return "", err
		}
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return "", err
	}
	return tail(data, n), nil
}

// tail returns the last n lines of data, trimmed.
func tail(data []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
