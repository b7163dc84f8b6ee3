package brokertest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// RabbitMQ is a throwaway RabbitMQ node: its own node name, AMQP and distribution
// ports, and data, log and configuration files in a temporary directory.
type RabbitMQ struct {
	URL string // amqp://guest:guest@127.0.0.1:<port>/
	srv *server
}

// AMQPURL returns AMQP_URL when it is set, and otherwise the URL of a throwaway node
// started for the test (StartRabbitMQ).
func AMQPURL(t testing.TB) string {
	t.Helper()
	if u := os.Getenv("AMQP_URL"); u != "" {
		return u
	}
	return StartRabbitMQ(t).URL
}

// StartRabbitMQ starts a RabbitMQ node for the test and stops it when the test ends.
// It runs the server script of the Debian package directly (/usr/lib/rabbitmq/bin,
// which does not switch to the rabbitmq account), or the one named by
// JOBC_RABBITMQ_SERVER, with every file it writes under a temporary directory and the
// system's configuration (/etc/rabbitmq) ignored. Booting takes a few seconds.
func StartRabbitMQ(t testing.TB) *RabbitMQ {
	t.Helper()
	bin, err := lookBinary("AMQP_URL", "install rabbitmq-server (Debian: apt-get install rabbitmq-server)",
		append(envCandidate("JOBC_RABBITMQ_SERVER"), "/usr/lib/rabbitmq/bin/rabbitmq-server", "rabbitmq-server")...)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ports := freePorts(t, 2)
	port, dist := ports[0], ports[1]
	name := fmt.Sprintf("jobctest%d", port)
	conf := filepath.Join(dir, "rabbitmq.conf")
	// Guest may log in over 127.0.0.1 (the default); the disk alarm must not stop
	// publishers on a nearly full test machine.
	confText := fmt.Sprintf("listeners.tcp.default = 127.0.0.1:%d\ndisk_free_limit.absolute = 1MB\n", port)
	files := map[string]string{conf: confText, filepath.Join(dir, "enabled_plugins"): "[].\n", filepath.Join(dir, "rabbitmq-env.conf"): ""}
	for path, text := range files {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatalf("brokertest: %v", err)
		}
	}
	env := []string{
		"HOME=" + dir, // the Erlang cookie
		"RABBITMQ_NODENAME=" + name,
		"RABBITMQ_NODE_IP_ADDRESS=127.0.0.1",
		"RABBITMQ_NODE_PORT=" + strconv.Itoa(port),
		"RABBITMQ_DIST_PORT=" + strconv.Itoa(dist),
		"RABBITMQ_CONFIG_FILE=" + conf,
		"RABBITMQ_CONF_ENV_FILE=" + filepath.Join(dir, "rabbitmq-env.conf"),
		"RABBITMQ_ADVANCED_CONFIG_FILE=" + filepath.Join(dir, "advanced.config"),
		"RABBITMQ_ENABLED_PLUGINS_FILE=" + filepath.Join(dir, "enabled_plugins"),
		"RABBITMQ_MNESIA_BASE=" + filepath.Join(dir, "mnesia"),
		"RABBITMQ_LOG_BASE=" + filepath.Join(dir, "log"),
		"RABBITMQ_PID_FILE=" + filepath.Join(dir, "rabbitmq.pid"),
	}
	r := &RabbitMQ{URL: fmt.Sprintf("amqp://guest:guest@127.0.0.1:%d/", port),
		srv: &server{name: "rabbitmq-server", argv: []string{bin}, env: env, dir: dir, port: port, log: filepath.Join(dir, "rabbitmq-server.log")}}
	startServer(t, r.srv)
	return r
}

// Restart stops the node (SIGTERM: a clean shutdown), leaves it down for down, and
// boots it again with the same name, ports and data.
func (r *RabbitMQ) Restart(ctx context.Context, down time.Duration) error {
	return r.srv.restart(ctx, down)
}
