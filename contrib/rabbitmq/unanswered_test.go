package jobcamqp_test

import (
	"context"
	"fmt"
	neturl "net/url"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/contrib/rabbitmq"
	"github.com/jobc-dev/jobc/internal/brokertest"
	"github.com/jobc-dev/jobc/internal/netfault"
	"github.com/jobc-dev/jobc/runtime/relay"
)

// TestRabbitMQUnansweredPublish: a broker that takes the messages and then answers
// nothing (a frozen node, a link gone silent) ends two concurrent Publish calls, one on
// the pooled channel, which it must close, one opening a channel, with errors soon
// after their context, instead of holding them until heartbeats give up; once the
// link heals, the next Publish goes out on a new connection.
func TestRabbitMQUnansweredPublish(t *testing.T) {
	t.Parallel()
	url := brokertest.AMQPURL(t)
	prefix := fmt.Sprintf("silent%d", time.Now().UnixNano())
	exchange, _ := newQueue(t, url, prefix)
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := netfault.Listen("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	u.Host = proxy.Addr()
	opts := jobcamqp.Options{Exchange: exchange, DialTimeout: 2 * time.Second, WriteTimeout: time.Second}
	sink, err := jobcamqp.Dial(t.Context(), u.String(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	msg := func(id int64) []relay.Message {
		return []relay.Message{{ID: id, Event: "order_paid", Version: 1, Subject: prefix + ".paid", Payload: []byte(`{}`)}}
	}
	if errs := sink.Publish(t.Context(), msg(1)); errs != nil {
		t.Fatalf("publish before the fault: %v", errs)
	}

	proxy.Blackhole()
	const publishTimeout = 500 * time.Millisecond
	done := make(chan []error, 2)
	for id := range int64(2) {
		go func() {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), publishTimeout)
			defer cancel()
			done <- sink.Publish(ctx, msg(10+id))
		}()
	}
	// Publish may take its timeout, then a WriteTimeout to close the channel it used;
	// twice the sum leaves room for a loaded machine, and is far below the heartbeat
	// timeout (amqp091-go's default 10s interval) that alone ended it before.
	wait := time.After(2 * (publishTimeout + opts.WriteTimeout))
	for n := range 2 {
		select {
		case errs := <-done:
			if len(errs) != 1 || errs[0] == nil {
				t.Fatalf("publish to a silent broker: %v, want one error", errs)
			}
			t.Logf("publish to a silent broker: %v", errs[0])
		case <-wait:
			var stacks strings.Builder
			_ = pprof.Lookup("goroutine").WriteTo(&stacks, 1)
			t.Fatalf("%d of 2 publications to a silent broker still running %s after they began (timeout %s, write timeout %s); goroutines:\n%s",
				2-n, 2*(publishTimeout+opts.WriteTimeout), publishTimeout, opts.WriteTimeout, stacks.String())
		}
	}

	proxy.Heal()
	accepted := proxy.Accepted()
	if errs := sink.Publish(t.Context(), msg(3)); errs != nil {
		t.Fatalf("publish after the link healed: %v", errs)
	}
	if proxy.Accepted() == accepted {
		t.Errorf("the publish after the fault reused the silent connection (%d connections accepted)", accepted)
	}
}
