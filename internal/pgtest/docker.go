package pgtest

// The Docker fallback of Start. It runs the docker command line through
// os/exec, as sqlc's tests do, instead of linking a Docker client library:
// testcontainers-go alone put some sixty modules (the Docker API, OpenTelemetry,
// gopsutil, ...) into the module graph of every application that imports the
// runtime, because the runtime's tests import this package.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultDockerImage is the image the Docker fallback runs.
const DefaultDockerImage = "postgres:17-alpine"

// errDockerUnavailable reports that there is no docker command or no Docker
// daemon answering it, so Start moves on instead of failing.
var errDockerUnavailable = errors.New("no reachable Docker daemon")

const (
	// dockerInfoTimeout bounds "docker info", the check that a daemon answers.
	dockerInfoTimeout = 15 * time.Second
	// dockerReadyTimeout bounds "docker run" (which may pull the image) and
	// the wait until the server accepts TCP connections.
	dockerReadyTimeout = 5 * time.Minute
	// dockerReadyPoll is the pause between connection attempts while the
	// container initializes its cluster.
	dockerReadyPoll = 100 * time.Millisecond
	// dockerRemoveTimeout bounds the removal of a container after a failed
	// start.
	dockerRemoveTimeout = 30 * time.Second
	// dockerLabel marks the containers pgtest starts, so that leftovers can
	// be found with "docker ps --filter label=jobc.pgtest".
	dockerLabel = "jobc.pgtest=1"
)

// dockerWatchdogScript does for a container what watchdogScript does for a
// cluster: it waits until the process that started the container exits (its
// stdin, a pipe only that process writes to, reaches end of file) and
// removes the container. testcontainers-go ran a reaper container (Ryuk) for
// this. Arguments: the docker command, the container id.
const dockerWatchdogScript = `trap '' HUP INT QUIT TERM PIPE
read -r _ || :
"$1" rm --force --volumes "$2" >/dev/null 2>&1
`

// dockerCLI runs PostgreSQL containers with the docker command.
type dockerCLI struct {
	bin          string        // the docker command: a name looked up on PATH, or a path
	readyTimeout time.Duration // zero means dockerReadyTimeout
	log          *slog.Logger
}

// startDocker runs a PostgreSQL container of image (empty: DefaultDockerImage)
// with the docker command on PATH. It returns an error wrapping
// errDockerUnavailable when there is no docker command or no daemon answers.
func startDocker(ctx context.Context, image string, log *slog.Logger) (*Server, error) {
	return dockerCLI{bin: "docker", log: log}.start(ctx, image)
}

// dockerRunArgs returns the arguments of the "docker run" that starts the
// server: detached, removed when it stops, trusting every connection like a
// throwaway Cluster, and published on an ephemeral port of the loopback
// interface only. The server options match the Cluster's, except fsync: the
// image's data lives in the container and dies with it anyway.
func dockerRunArgs(image string) []string {
	return []string{
		"run", "--detach", "--rm",
		"--label", dockerLabel,
		"--publish", "127.0.0.1::5432",
		"--env", "POSTGRES_HOST_AUTH_METHOD=trust",
		"--env", "POSTGRES_DB=postgres",
		image,
		"-c", "fsync=off",
		"-c", "full_page_writes=off",
		"-c", "max_connections=400",
	}
}

func (d dockerCLI) start(ctx context.Context, image string) (_ *Server, err error) {
	if image == "" {
		image = DefaultDockerImage
	}
	bin, err := exec.LookPath(d.bin)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errDockerUnavailable, err)
	}
	infoCtx, cancel := context.WithTimeout(ctx, dockerInfoTimeout)
	defer cancel()
	if _, err := d.run(infoCtx, bin, "info", "--format", "{{.ServerVersion}}"); err != nil {
		return nil, fmt.Errorf("%w: %w", errDockerUnavailable, err)
	}

	readyTimeout := d.readyTimeout
	if readyTimeout == 0 {
		readyTimeout = dockerReadyTimeout
	}
	readyCtx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	out, err := d.run(readyCtx, bin, dockerRunArgs(image)...)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", image, err)
	}
	id := lastWord(out)
	if id == "" {
		return nil, fmt.Errorf("run %s: docker run printed no container id", image)
	}
	ctr := &container{docker: d, bin: bin, id: id}
	defer func() {
		if err != nil {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), dockerRemoveTimeout)
			defer cancel()
			err = errors.Join(err, ctr.remove(rctx))
		}
	}()
	// Between docker run and here a dying process would leave the container
	// running; the label finds such leftovers.
	if err := ctr.startWatchdog(); err != nil {
		return nil, err
	}
	out, err = d.run(readyCtx, bin, "port", id, "5432/tcp")
	if err != nil {
		return nil, fmt.Errorf("container %s: %w", id, err)
	}
	host, port, err := parseDockerPort(out)
	if err != nil {
		return nil, fmt.Errorf("container %s: %w", id, err)
	}
	connString := keywordValue(
		"host", host,
		"port", port,
		"user", "postgres",
		"dbname", "postgres",
		"sslmode", "disable",
	)
	if err := d.waitReady(readyCtx, connString); err != nil {
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), dockerInfoTimeout)
		defer cancel()
		logs, _ := d.run(lctx, bin, "logs", "--tail", fmt.Sprint(logTailLines), id)
		return nil, fmt.Errorf("container %s (%s) did not accept connections on %s:%s within %s: %w\ncontainer log (last lines):\n%s",
			id, image, host, port, readyTimeout, err, strings.TrimSpace(string(logs)))
	}
	d.log.InfoContext(ctx, "pgtest: started PostgreSQL container", "image", image, "id", id, "addr", net.JoinHostPort(host, port))
	return &Server{
		connString: connString,
		desc:       fmt.Sprintf("Docker container %s (%s)", id, image),
		stop:       ctr.remove,
	}, nil
}

// waitReady connects until the server answers or ctx ends. The image's
// entrypoint initializes the cluster behind a server that listens on its unix
// socket only, so the first TCP connection that succeeds reaches the final
// server.
func (d dockerCLI) waitReady(ctx context.Context, connString string) error {
	for {
		err := ping(ctx, connString)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last attempt: %w)", context.Cause(ctx), err)
		case <-time.After(dockerReadyPoll):
		}
	}
}

// run runs the docker command and returns its standard output; a failure
// includes its standard error.
func (d dockerCLI) run(ctx context.Context, bin string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg != "" {
			msg = ": " + tail([]byte(msg), logTailLines)
		}
		return stdout.Bytes(), fmt.Errorf("docker %s: %w%s", args[0], err, msg)
	}
	return stdout.Bytes(), nil
}

// parseDockerPort returns the host address of the first binding that
// "docker port ID 5432/tcp" prints, one "host:port" a line (IPv4 before
// IPv6).
func parseDockerPort(out []byte) (host, port string, err error) {
	for line := range strings.Lines(string(out)) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		host, port, err := net.SplitHostPort(line)
		if err == nil {
			if n, perr := strconv.Atoi(port); perr != nil || n <= 0 || n > 65535 {
				err = fmt.Errorf("bad port %q", port)
			}
		}
		if err != nil {
			return "", "", fmt.Errorf("docker port: %q: %w", line, err)
		}
		if host == "0.0.0.0" || host == "::" || host == "" {
			host = "127.0.0.1"
		}
		return host, port, nil
	}
	return "", "", errors.New("docker port: no published port for 5432/tcp")
}

// lastWord returns the last whitespace-separated word of out: docker run
// --detach prints the container id last.
func lastWord(out []byte) string {
	lines := strings.Fields(string(out))
	if len(lines) == 0 {
		return ""
	}
	return lines[len(lines)-1]
}

// container is a running PostgreSQL container; remove stops and deletes it.
type container struct {
	docker dockerCLI
	bin    string
	id     string

	mu           sync.Mutex
	removed      bool
	watchdog     *exec.Cmd
	watchdogPipe *os.File
}

// startWatchdog starts the process that removes the container when this
// process dies; see dockerWatchdogScript.
func (c *container) startWatchdog() error {
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("container watchdog: %w", err)
	}
	cmd := exec.Command("/bin/sh", "-c", dockerWatchdogScript, "pgtest-docker-watchdog", c.bin, c.id)
	cmd.Stdin = r
	cmd.Dir = "/"
	(*account)(nil).configure(cmd, true) // own process group: Ctrl-C must not stop it
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("container watchdog: %w", errors.Join(err, r.Close(), w.Close()))
	}
	_ = r.Close()
	c.watchdog, c.watchdogPipe = cmd, w
	return nil
}

// remove deletes the container (docker rm --force) and stops the watchdog.
// Removing a removed container is a no-op.
func (c *container) remove(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.removed {
		return nil
	}
	c.removed = true
	_, err := c.docker.run(ctx, c.bin, "rm", "--force", "--volumes", c.id)
	if c.watchdog != nil {
		// Kill first, then close: the watchdog must not act on the closed
		// pipe, the container is gone (or its removal failed and is reported).
		_ = c.watchdog.Process.Kill()
		_ = c.watchdogPipe.Close()
		_ = c.watchdog.Wait()
		c.watchdog, c.watchdogPipe = nil, nil
	}
	if err != nil {
		return fmt.Errorf("pgtest: remove container %s: %w", c.id, err)
	}
	c.docker.log.DebugContext(ctx, "pgtest: removed PostgreSQL container", "id", c.id)
	return nil
}
