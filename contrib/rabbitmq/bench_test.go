package jobcamqp_test

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/jobc-dev/jobc/contrib/rabbitmq"
	"github.com/jobc-dev/jobc/internal/brokertest"
	"github.com/jobc-dev/jobc/internal/relaytest"
	"github.com/jobc-dev/jobc/internal/testkit"
	"github.com/jobc-dev/jobc/runtime/relay"
)

// benchQueues are the kinds of durable queue the benchmarks publish to.
var benchQueues = []struct {
	name string
	args amqp.Table
}{{"classic_v2", classicV2}, {"quorum", quorum}}

// BenchmarkRelayRabbitMQ: relay throughput to a durable queue with publisher confirms
// and persistent messages, in events/s, per kind of queue (see
// bench/results/2026-12-01-relay.txt).
func BenchmarkRelayRabbitMQ(b *testing.B) {
	url := brokertest.AMQPURL(b)
	for _, q := range benchQueues {
		b.Run("queue="+q.name, func(b *testing.B) {
			exchange, _ := newQueueOf(b, url, "bench", q.args)
			pool := testkit.MigratedSchema(b)
			sink, err := jobcamqp.Dial(b.Context(), url, jobcamqp.Options{Exchange: exchange})
			if err != nil {
				b.Fatal(err)
			}
			defer sink.Close()
			relaytest.BenchRelay(b, pool, "bench.happened", relaytest.BenchConfig(sink), 100_000)
		})
	}
}

// BenchmarkBarePublisherRabbitMQ is the broker's ceiling for the relay: amqp091-go
// alone, no database and no sink, publishing b.N persistent, mandatory messages of the
// relay's size and headers in batches of 1,000, each batch spread over n confirm-mode
// channels and every confirmation awaited before the next batch.
func BenchmarkBarePublisherRabbitMQ(b *testing.B) {
	url := brokertest.AMQPURL(b)
	for _, q := range benchQueues {
		for _, n := range []int{1, 4} {
			b.Run(fmt.Sprintf("queue=%s/channels=%d", q.name, n), func(b *testing.B) {
				exchange, _ := newQueueOf(b, url, "bare", q.args)
				benchBarePublisher(b, url, exchange, n)
			})
		}
	}
}

func benchBarePublisher(b *testing.B, url, exchange string, n int) {
	conn, err := amqp.Dial(url)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	chans := make([]*amqp.Channel, n)
	for i := range chans {
		if chans[i], err = conn.Channel(); err != nil {
			b.Fatal(err)
		}
		if err := chans[i].Confirm(false); err != nil {
			b.Fatal(err)
		}
	}
	body := []byte(`{"key":"customer-12345","n":12345,"note":"a payload of a realistic size, for a fair count","total_cents":86415}`)
	const batch = 1000
	ctx := b.Context()
	b.ResetTimer()
	began := time.Now()
	for sent := 0; sent < b.N; sent += batch {
		size := min(batch, b.N-sent)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for c, ch := range chans {
			lo, hi := sent+c*size/n, sent+(c+1)*size/n
			wg.Go(func() {
				dcs := make([]*amqp.DeferredConfirmation, 0, hi-lo)
				for i := lo; i < hi; i++ {
					id := strconv.Itoa(i)
					dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, exchange, "bare.happened", true, false, amqp.Publishing{
						ContentType: relay.ContentType, DeliveryMode: amqp.Persistent, MessageId: id, Type: "bench_event", Timestamp: began,
						Headers: amqp.Table{relay.HeaderEvent: "bench_event", relay.HeaderVersion: "1", relay.HeaderEventID: id, relay.HeaderOrderingKey: "customer-" + id},
						Body:    body,
					})
					if err != nil {
						errs[c] = err
						return
					}
					dcs = append(dcs, dc)
				}
				for _, dc := range dcs {
					ok, err := dc.WaitContext(ctx)
					switch {
					case err != nil:
						errs[c] = fmt.Errorf("wait for a confirm: %w", err)
						return
					case !ok:
						errs[c] = errors.New("the broker nacked a message")
						return
					}
				}
			})
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(began).Seconds(), "events/s")
}
