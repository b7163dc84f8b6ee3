// Command withpostgres runs a command with DATABASE_URL pointing at a
// PostgreSQL server:
//
//	go run ./internal/cmd/withpostgres -- go test ./...
//
// If DATABASE_URL is already set, the command simply runs with it. Otherwise
// withpostgres starts a throwaway server with pgtest.Start (normally a
// cluster from the local PostgreSQL binaries), sets DATABASE_URL to its
// postgres database for the command, and stops and removes the server when
// the command exits. This gives a whole "go test ./..." run a single server,
// on which each test package creates its own database (pgtest.Main), so
// packages still run in parallel.
//
// The command's stdin, stdout and stderr are passed through, and withpostgres
// exits with its exit code (128+n if it was killed by signal n). SIGTERM and
// SIGHUP are forwarded to the command. SIGINT is not: an interrupt from the
// terminal already reaches the command, which runs in the same process group,
// and a second copy would turn one Ctrl-C into "Ctrl-C twice" for programs
// that force-quit on that. Either way, once the command is gone the server is
// stopped; should withpostgres itself be killed, pgtest's watchdog stops and
// removes the cluster.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/jobc-dev/jobc/internal/pgtest"
)

const stopTimeout = time.Minute

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(argv []string) int {
	flags := flag.NewFlagSet("withpostgres", flag.ContinueOnError)
	flags.Usage = func() {
		fmt.Fprintln(flags.Output(), "usage: withpostgres -- command [args...]")
		fmt.Fprintln(flags.Output(), "Runs command with DATABASE_URL set, starting a throwaway PostgreSQL server unless DATABASE_URL is already set.")
	}
	if err := flags.Parse(argv); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	args := flags.Args()
	if len(args) == 0 {
		flags.Usage()
		return 2
	}

	// Resolve the command before starting a server for it.
	cmd := exec.Command(args[0], args[1:]...)
	if cmd.Err != nil {
		fmt.Fprintf(os.Stderr, "withpostgres: %v\n", cmd.Err)
		return 127
	}

	// Catch signals from the start, so that an interrupt while the server
	// starts still stops it.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)

	env := os.Environ()
	var srv *pgtest.Server
	if os.Getenv("DATABASE_URL") != "" {
		fmt.Fprintln(os.Stderr, "withpostgres: using the PostgreSQL server from DATABASE_URL")
	} else {
		var sig os.Signal
		var err error
		srv, sig, err = startServer(sigs)
		if sig != nil {
			return signalExitCode(sig)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "withpostgres: %v\n", err)
			return 1
		}
		env = append(withoutEnv(env, "DATABASE_URL"), "DATABASE_URL="+srv.ConnString())
	}

	cmd.Env = env
	code := runCommand(cmd, sigs)

	if srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		defer cancel()
		if err := srv.Stop(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "withpostgres: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// startServer starts a server with pgtest.Start. A signal arriving meanwhile
// cancels the start; it is returned instead of a server.
func startServer(sigs <-chan os.Signal) (*pgtest.Server, os.Signal, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		srv *pgtest.Server
		err error
	}
	done := make(chan result, 1)
	began := time.Now()
	go func() {
		// pgtest logs progress at Info; this command prints its own line.
		quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		srv, err := pgtest.Config{Logger: quiet}.Start(ctx)
		done <- result{srv, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, nil, r.err
		}
		fmt.Fprintf(os.Stderr, "withpostgres: using %s, started in %v\n", r.srv, time.Since(began).Round(time.Millisecond))
		return r.srv, nil, nil
	case sig := <-sigs:
		cancel()
		if r := <-done; r.srv != nil {
			ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
			defer cancel()
			if err := r.srv.Stop(ctx); err != nil {
				fmt.Fprintf(os.Stderr, "withpostgres: %v\n", err)
			}
		}
		return nil, sig, nil
	}
}

// runCommand runs cmd with the standard streams passed through, forwarding
// SIGTERM and SIGHUP, and returns its exit code.
func runCommand(cmd *exec.Cmd, sigs <-chan os.Signal) int {
	cmd.Stdin = os.Stdin
	cmd.Stdout = os.Stdout
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "withpostgres: %v\n", err)
		if errors.Is(err, exec.ErrNotFound) {
			return 127
		}
		return 126
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case sig := <-sigs:
			if sig != os.Interrupt {
				_ = cmd.Process.Signal(sig)
			}
		case err := <-done:
			return exitCode(cmd.ProcessState, err)
		}
	}
}

// exitCode maps how the command ended to this process's exit code, the way
// shells do.
func exitCode(state *os.ProcessState, err error) int {
	if state == nil {
		fmt.Fprintf(os.Stderr, "withpostgres: %v\n", err)
		return 1
	}
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return signalExitCode(ws.Signal())
	}
	if code := state.ExitCode(); code >= 0 {
		return code
	}
	return 1
}

func signalExitCode(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 1
}

// withoutEnv returns env without the variable key.
func withoutEnv(env []string, key string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return out
}
