package pgtest

// The Docker fallback of Start, isolated here: it is the only file that
// imports testcontainers-go.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/testcontainers/testcontainers-go"
	tcpostgres "github.com/testcontainers/testcontainers-go/modules/postgres"
)

// DefaultDockerImage is the image the Docker fallback runs.
const DefaultDockerImage = "postgres:17-alpine"

// errDockerUnavailable reports that no Docker daemon is reachable, so Start
// moves on instead of failing.
var errDockerUnavailable = errors.New("no reachable Docker daemon")

// startDocker runs a PostgreSQL container with testcontainers-go. It returns
// an error wrapping errDockerUnavailable when there is no Docker daemon.
// testcontainers' reaper (Ryuk) removes the container should this process die
// without calling Stop.
func startDocker(ctx context.Context, image string, log *slog.Logger) (*Server, error) {
	if err := dockerHealthy(ctx); err != nil {
		return nil, fmt.Errorf("%w: %w", errDockerUnavailable, err)
	}
	if image == "" {
		image = DefaultDockerImage
	}
	ctr, err := tcpostgres.Run(ctx, image,
		tcpostgres.WithDatabase("postgres"),
		testcontainers.WithCmdArgs(
			"-c", "full_page_writes=off",
			"-c", "max_connections=200",
		),
		tcpostgres.BasicWaitStrategies(),
	)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", image, errors.Join(err, testcontainers.TerminateContainer(ctr)))
	}
	connString, err := ctr.ConnectionString(ctx, "sslmode=disable")
	if err != nil {
		return nil, fmt.Errorf("container connection string: %w", errors.Join(err, testcontainers.TerminateContainer(ctr)))
	}
	log.Info("pgtest: started PostgreSQL container", "image", image, "id", ctr.GetContainerID())
	return &Server{
		connString: connString,
		desc:       fmt.Sprintf("Docker container %s (%s)", ctr.GetContainerID(), image),
		stop: func(ctx context.Context) error {
			if err := ctr.Terminate(ctx); err != nil {
				return fmt.Errorf("pgtest: terminate container: %w", err)
			}
			return nil
		},
	}, nil
}

// dockerHealthy checks that a Docker daemon answers.
func dockerHealthy(ctx context.Context) (err error) {
	defer func() {
		// testcontainers has been known to panic when no Docker host is
		// configured; that just means "no Docker".
		if r := recover(); r != nil {
			err = fmt.Errorf("testcontainers: %v", r)
		}
	}()
	provider, err := testcontainers.ProviderDefault.GetProvider()
	if err != nil {
		return err
	}
	defer provider.Close()
	return provider.Health(ctx)
}
