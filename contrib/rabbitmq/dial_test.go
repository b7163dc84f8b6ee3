package jobcamqp_test

import (
	"fmt"
	"net"
	"strings"
	"testing"

	jobcamqp "github.com/jobc-dev/jobc/contrib/rabbitmq"
)

// TestDialFailsWithoutBroker: Dial fails when nothing listens, saying it cannot connect
// to the URL, whose password it hides.
func TestDialFailsWithoutBroker(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := fmt.Sprintf("127.0.0.1:%d", l.Addr().(*net.TCPAddr).Port)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	sink, err := jobcamqp.Dial(t.Context(), "amqp://relay:s3cret@"+closed+"/", jobcamqp.Options{})
	if err == nil {
		_ = sink.Close()
		t.Fatalf("Dial to %s, where nothing listens: no error", closed)
	}
	if want := "jobcamqp: cannot connect to amqp://relay:xxxxx@" + closed + "/: "; !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("Dial to %s: %v; want %q and no password", closed, err, want)
	}
}
