// Package jobcamqp is the relay's sink for RabbitMQ (AMQP 0-9-1): it publishes the
// outbox's events to an exchange with the event's subject as routing key, persistent
// and mandatory, on channels in confirm mode, and reports an event published only once
// the broker acked it. A message the broker returns (no queue is bound for its routing
// key) is poison and fails its event; a nack, a closed channel or a lost connection is
// retried, on a new connection when the old one is gone. See runtime/relay for the
// message's headers.
//
// The relay hands the sink only events its spec declares, each to its declared subject
// (see runtime/relay): on the default exchange a routing key is the name of the queue
// it reaches, any queue of the virtual host, so prefer an exchange of the application's
// whose bindings are the only routes. The sink refuses besides, as poison, a routing
// key that no spec should name: one starting with amq. (the broker's own names: the
// direct reply-to pseudo-queue amq.rabbitmq.reply-to, which delivers to another
// client's channel, and server-named queues amq.gen-...), longer than AMQP's 255 bytes,
// holding a topic wildcard (* or #), whitespace, a control character or invalid UTF-8.
// The exchange is the sink's option, never the row's, and the message carries only the
// headers of runtime/relay: no CC or BCC header can route it to further keys.
// CheckRoutingKey is that rule.
//
// RabbitMQ has no deduplication: a retried event (after a timeout, a reconnect, or a
// relay killed between the ack and its UPDATE) can reach a queue twice. Consumers
// deduplicate by the message id, the event's id.
package jobcamqp

import (
	"context"
	"errors"
	"fmt"
	"net"
	neturl "net/url"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/jobc-dev/jobc/runtime/relay"
)

// Options tune a Sink.
type Options struct {
	// Exchange receives the events; "" is the default exchange, which routes to the
	// queue named by the subject. The exchange is the application's: the sink does
	// not declare it.
	Exchange string
	// DialTimeout bounds connecting, and opening a channel in confirm mode (within the
	// Publish call's context); default 10s.
	DialTimeout time.Duration
	// WriteTimeout bounds each write to the socket; default 10s. A publish is a write,
	// and a broker that stops reading (a resource alarm blocks publishers, a peer gone
	// without a FIN) would otherwise hold it, and the relay's shutdown, forever: past
	// the timeout the connection is closed and the batch retried on a new one. It also
	// bounds closing the channel of a Publish whose context ended: a broker that
	// stopped answering then loses the connection too.
	WriteTimeout time.Duration
}

// Sink publishes events to RabbitMQ. It is safe for concurrent use: each Publish call
// takes a confirm-mode channel of its own from a small pool.
type Sink struct {
	url  string
	opts Options

	mu    sync.Mutex // guards conn, sock and idle
	conn  *amqp.Connection
	sock  net.Conn // conn's socket
	idle  []*pubChannel
	close bool
}

var _ relay.Sink = (*Sink)(nil)

// pubChannel is a channel in confirm mode with its returned messages, and the socket
// of its connection.
type pubChannel struct {
	ch      *amqp.Channel
	returns chan amqp.Return
	sock    net.Conn
}

// Dial connects to the broker at url (amqp://user:pass@host:port/vhost) and returns a
// sink on it, which reconnects when the connection is lost.
func Dial(ctx context.Context, url string, opts Options) (*Sink, error) {
	if opts.DialTimeout <= 0 {
		opts.DialTimeout = 10 * time.Second
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = 10 * time.Second
	}
	s := &Sink{url: url, opts: opts}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.connLocked(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// connLocked returns the open connection, dialling a new one when there is none.
func (s *Sink) connLocked(ctx context.Context) (*amqp.Connection, error) {
	if s.close {
		return nil, errors.New("jobcamqp: the sink is closed")
	}
	if s.conn != nil && !s.conn.IsClosed() {
		return s.conn, nil
	}
	s.idle = nil // the old connection's channels died with it
	timeout := s.opts.DialTimeout
	if d, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(d))
	}
	var sock net.Conn
	dial := func(network, addr string) (net.Conn, error) {
		c, err := amqp.DefaultDial(timeout)(network, addr)
		if err != nil {
			return nil, err
		}
		sock = &writeDeadlineConn{Conn: c, timeout: s.opts.WriteTimeout}
		return sock, nil
	}
	conn, err := amqp.DialConfig(s.url, amqp.Config{Dial: dial, Properties: amqp.Table{"connection_name": "jobc relay"}})
	if err != nil {
		return nil, fmt.Errorf("jobcamqp: cannot connect to %s: %w", redact(s.url), err)
	}
	s.conn, s.sock = conn, sock
	return conn, nil
}

// redact hides the password of url, for errors.
func redact(url string) string {
	u, err := neturl.Parse(url)
	switch {
	case err != nil:
		return "an invalid URL" // which may hold a password
	case u.User == nil:
		return url
	}
	return u.Redacted()
}

// take returns an idle channel, or opens one in confirm mode.
func (s *Sink) take(ctx context.Context) (*pubChannel, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	conn, err := s.connLocked(ctx)
	if err != nil {
		return nil, err
	}
	for len(s.idle) > 0 {
		pc := s.idle[len(s.idle)-1]
		s.idle = s.idle[:len(s.idle)-1]
		if !pc.ch.IsClosed() {
			return pc, nil
		}
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.DialTimeout)
	defer cancel()
	var ch *amqp.Channel
	err = bounded(ctx, s.sock, func() (err error) {
		ch, err = conn.Channel()
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("jobcamqp: open a channel: %w", err)
	}
	if err := bounded(ctx, s.sock, func() error { return ch.Confirm(false) }); err != nil {
		_ = bounded(ctx, s.sock, ch.Close)
		return nil, fmt.Errorf("jobcamqp: put the channel in confirm mode: %w", err)
	}
	// Returns arrive before the ack of their message; Publish reads them while it
	// waits for the acks, so the buffer only smooths bursts.
	return &pubChannel{ch: ch, returns: ch.NotifyReturn(make(chan amqp.Return, 256)), sock: s.sock}, nil
}

// give puts a healthy channel back in the pool.
func (s *Sink) give(pc *pubChannel) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if pc.ch.IsClosed() || s.close {
		return
	}
	s.idle = append(s.idle, pc)
}

// Publish sends msgs on one channel and waits for the broker's confirmations (see
// relay.Sink).
func (s *Sink) Publish(ctx context.Context, msgs []relay.Message) []error {
	pc, err := s.take(ctx)
	if err != nil {
		return relay.AllErrors(len(msgs), err)
	}
	var errs []error
	fail := func(i int, err error) {
		if errs == nil {
			errs = make([]error, len(msgs))
		}
		errs[i] = err
	}
	byID := make(map[string]int, len(msgs))
	confirms := make([]*amqp.DeferredConfirmation, len(msgs))
	for i := range msgs {
		m := &msgs[i]
		if err := CheckRoutingKey(m.Subject); err != nil {
			fail(i, relay.Poison(fmt.Errorf("jobcamqp: event %d: %w", m.ID, err)))
			continue
		}
		headers := amqp.Table{}
		for _, h := range m.Headers() {
			headers[h[0]] = h[1]
		}
		id := m.IDString()
		byID[id] = i
		dc, err := pc.ch.PublishWithDeferredConfirmWithContext(ctx, s.opts.Exchange, m.Subject, true, false, amqp.Publishing{
			ContentType: relay.ContentType, DeliveryMode: amqp.Persistent, MessageId: id, Type: m.Event,
			Timestamp: m.CreatedAt, Headers: headers, Body: m.Payload,
		})
		if err != nil {
			fail(i, fmt.Errorf("jobcamqp: event %d to %q: %w", m.ID, m.Subject, err))
			continue
		}
		confirms[i] = dc
	}
	returned := map[int]amqp.Return{}
	onReturn := func(r amqp.Return) {
		if i, ok := byID[r.MessageId]; ok {
			returned[i] = r
		}
	}
	for i, dc := range confirms {
		if dc == nil {
			continue
		}
		if err := waitConfirm(ctx, dc, pc.returns, onReturn); err != nil {
			fail(i, fmt.Errorf("jobcamqp: event %d: %w", msgs[i].ID, err))
		}
	}
	drainReturns(pc.returns, onReturn)
	for i, r := range returned {
		fail(i, relay.Poison(fmt.Errorf("jobcamqp: event %d: returned by the broker: exchange %q routing key %q: %d %s",
			msgs[i].ID, r.Exchange, r.RoutingKey, r.ReplyCode, r.ReplyText)))
	}
	if ctx.Err() != nil {
		// Confirmations may still arrive for this channel's messages; it is not reused.
		// Closing it waits for the broker, which may be the one that stopped answering.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.WriteTimeout)
		_ = bounded(cctx, pc.sock, pc.ch.Close)
		cancel()
	} else {
		s.give(pc)
	}
	return errs
}

// CheckRoutingKey says why the sink refuses to publish with routing key key, or
// returns nil (see the package documentation).
func CheckRoutingKey(key string) error {
	refuse := func(why string) error {
		return fmt.Errorf("refused routing key %s: %s", relay.Quote(key), why)
	}
	switch {
	case key == "":
		return refuse("empty")
	case len(key) > 255:
		return refuse("longer than AMQP's 255 bytes")
	case strings.HasPrefix(key, "amq."):
		return refuse("amq. names are the broker's own (amq.rabbitmq.reply-to reaches another client's channel, amq.gen- queues are server-named)")
	case !utf8.ValidString(key):
		return refuse("not valid UTF-8")
	case strings.ContainsAny(key, "*#"):
		return refuse("a topic wildcard (* or #) is not a routing key to publish with")
	case strings.IndexFunc(key, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0:
		return refuse("whitespace or a control character")
	}
	return nil
}

// bounded runs f, an amqp091-go call that waits for the broker's answer without a
// timeout of its own (opening, confirm-selecting or closing a channel), and closes the
// connection's socket if f still runs when ctx ends. The connection then fails, which
// ends f with an error, and the next Publish dials a new one: a broker that accepts
// frames and never answers cannot hold the relay (or, through the sink's lock, every
// other batch) forever.
func bounded(ctx context.Context, sock net.Conn, f func() error) error {
	stop := context.AfterFunc(ctx, func() { _ = sock.Close() })
	defer stop()
	if err := f(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("no answer from the broker (the connection was closed): %w", context.Cause(ctx))
		}
		return err
	}
	return nil
}

// drainReturns passes the returns already received to onReturn. amqp091-go closes
// returns when the channel closes, and a receive from a closed channel succeeds at
// once, forever: so each receive checks for it.
func drainReturns(returns <-chan amqp.Return, onReturn func(amqp.Return)) {
	for {
		select {
		case r, ok := <-returns:
			if !ok {
				return
			}
			onReturn(r)
		default:
			return
		}
	}
}

// waitConfirm waits for dc, passing the returns that arrive meanwhile to onReturn.
func waitConfirm(ctx context.Context, dc *amqp.DeferredConfirmation, returns <-chan amqp.Return, onReturn func(amqp.Return)) error {
	for {
		select {
		case <-dc.Done():
			if !dc.Acked() {
				return errors.New("the broker did not confirm it (a nack, or the channel closed)")
			}
			return nil
		case r, ok := <-returns:
			if !ok {
				returns = nil // closed with the channel: dc is done or soon will be
				continue
			}
			onReturn(r)
		case <-ctx.Done():
			return fmt.Errorf("no confirmation from the broker: %w", ctx.Err())
		}
	}
}

// Close closes the connection.
func (s *Sink) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.close, s.idle = true, nil
	if s.conn == nil {
		return nil
	}
	if err := s.conn.CloseDeadline(time.Now().Add(s.opts.WriteTimeout)); err != nil && !errors.Is(err, amqp.ErrClosed) {
		return fmt.Errorf("jobcamqp: close: %w", err)
	}
	return nil
}

// writeDeadlineConn sets a deadline before every write.
type writeDeadlineConn struct {
	net.Conn
	timeout time.Duration
}

func (c *writeDeadlineConn) Write(b []byte) (int, error) {
	if err := c.SetWriteDeadline(time.Now().Add(c.timeout)); err != nil {
		return 0, err
	}
	return c.Conn.Write(b)
}
