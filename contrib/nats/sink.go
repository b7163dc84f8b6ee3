// Package jobcnats is the relay's sink for NATS JetStream: it publishes the outbox's
// events to the stream that binds their subjects, with the event id as Nats-Msg-Id, so
// that JetStream's duplicate window turns the relay's retries (after a timeout, a
// reconnect, a relay killed between the ack and its UPDATE) into exactly one message
// in the stream. A batch is published with PublishMsgAsync and the sink waits for every
// ack. See runtime/relay for the message's headers.
//
// Exactly once holds within the stream's duplicate window (Duplicates, 2 minutes by
// default): keep it longer than the relay's lease plus its longest backoff
// (relay.Config.LeaseDuration + RetryMax), or a retry after the window is a second
// message.
//
// The relay hands the sink only events its spec declares, each to its declared subject
// (see runtime/relay). The sink refuses besides, as poison, any subject that no spec
// should name and that would make a publication more than a message to a stream: one
// starting with $ (the server's own API: $JS.API.STREAM.DELETE.<stream> deletes a
// stream, $SYS, $KV and $O are as reserved) or _INBOX. (the replies other clients wait
// for), one holding a wildcard (* or >), whitespace, a control character or invalid
// UTF-8, and one with an empty token. CheckSubject is that rule.
//
// The stream is the application's: the sink does not create it. CheckStreams says
// which subject no stream binds, for a relay to refuse to start (jobc relay does); a
// publication to such a subject gets no response and is retried (the stream may be
// created while the relay runs). A message larger than the server's max_payload, or
// than the stream's max_msg_size, is poison and fails its event.
package jobcnats

import (
	"context"
	"errors"
	"fmt"
	neturl "net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jobc-dev/jobc/runtime/relay"
)

// Options tune a Sink; the zero value selects the defaults.
type Options struct {
	// MsgIDPrefix is put before the event id in Nats-Msg-Id, for several databases
	// relaying into one stream (their ids overlap); default none.
	MsgIDPrefix string
	// AckTimeout bounds the wait for one message's ack, independently of the relay's
	// PublishTimeout; default 10s.
	AckTimeout time.Duration
	// MaxPending is the most unacknowledged messages in flight; default 4096. Keep it
	// above the relay's BatchSize times its Concurrency.
	MaxPending int
}

// Sink publishes events to JetStream. It is safe for concurrent use.
type Sink struct {
	nc     *nats.Conn
	js     jetstream.JetStream
	opts   Options
	closer func()
}

var _ relay.Sink = (*Sink)(nil)

// Connect connects to the NATS servers at url (comma-separated) and returns a sink
// on that connection, which reconnects forever and which Close closes. When no server
// answers, Connect fails: a sink that only retried would leave a relay looking alive
// while it publishes nothing, and until a first connection the client does not know
// whether the server supports headers, so every publication would fail with
// "headers not supported" instead of the missing server.
func Connect(url string, opts Options, natsOpts ...nats.Option) (*Sink, error) {
	natsOpts = append([]nats.Option{
		nats.Name("jobc relay"),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
	}, natsOpts...)
	nc, err := nats.Connect(url, natsOpts...)
	if err != nil {
		return nil, fmt.Errorf("jobcnats: cannot connect to %s: %w", redact(url), err)
	}
	s, err := New(nc, opts)
	if err != nil {
		nc.Close()
		return nil, err
	}
	s.closer = nc.Close
	return s, nil
}

// New returns a sink on nc, which the caller keeps and closes.
func New(nc *nats.Conn, opts Options) (*Sink, error) {
	if opts.AckTimeout <= 0 {
		opts.AckTimeout = 10 * time.Second
	}
	if opts.MaxPending <= 0 {
		opts.MaxPending = 4096
	}
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(opts.MaxPending), jetstream.WithPublishAsyncTimeout(opts.AckTimeout))
	if err != nil {
		return nil, fmt.Errorf("jobcnats: %w", err)
	}
	return &Sink{nc: nc, js: js, opts: opts, closer: func() {}}, nil
}

// CheckStreams returns an error naming the first subject that no JetStream stream
// binds, or why it could not ask the server (JetStream not enabled, no answer within
// ctx): a publication to such a subject gets no ack and would be retried until a
// stream binds it.
func (s *Sink) CheckStreams(ctx context.Context, subjects ...string) error {
	for _, subject := range subjects {
		_, err := s.js.StreamNameBySubject(ctx, subject)
		switch {
		case errors.Is(err, jetstream.ErrStreamNotFound):
			return fmt.Errorf("jobcnats: no stream binds subject %s: create a JetStream stream whose subjects include it", relay.Quote(subject))
		case err != nil:
			return fmt.Errorf("jobcnats: find the stream that binds subject %s: %w", relay.Quote(subject), err)
		}
	}
	return nil
}

// Publish sends msgs with PublishMsgAsync and waits for their acks (see relay.Sink).
func (s *Sink) Publish(ctx context.Context, msgs []relay.Message) []error {
	var errs []error
	fail := func(i int, err error) {
		if errs == nil {
			errs = make([]error, len(msgs))
		}
		errs[i] = err
	}
	futures := make([]jetstream.PubAckFuture, len(msgs))
	for i := range msgs {
		m := &msgs[i]
		if err := CheckSubject(m.Subject); err != nil {
			fail(i, relay.Poison(fmt.Errorf("jobcnats: event %d: %w", m.ID, err)))
			continue
		}
		nm := nats.NewMsg(m.Subject)
		nm.Data = m.Payload
		for _, h := range m.Headers() {
			nm.Header.Set(h[0], h[1])
		}
		nm.Header.Set("Content-Type", relay.ContentType)
		f, err := s.js.PublishMsgAsync(nm, jetstream.WithMsgID(s.opts.MsgIDPrefix+m.IDString()))
		if err != nil {
			fail(i, classify(m, err))
			continue
		}
		futures[i] = f
	}
	for i, f := range futures {
		if f == nil {
			continue
		}
		select {
		case <-f.Ok():
		case err := <-f.Err():
			fail(i, classify(&msgs[i], err))
		case <-ctx.Done():
			fail(i, fmt.Errorf("jobcnats: event %d: no ack from JetStream: %w", msgs[i].ID, ctx.Err()))
		}
	}
	return errs
}

// CheckSubject says why the sink refuses to publish to subject, or returns nil (see
// the package documentation).
func CheckSubject(subject string) error {
	refuse := func(why string) error {
		return fmt.Errorf("refused subject %s: %s", relay.Quote(subject), why)
	}
	switch {
	case subject == "":
		return refuse("empty")
	case strings.HasPrefix(subject, "$"):
		return refuse("subjects starting with $ are the server's API ($JS, $SYS, $KV, ...), not a stream's")
	case subject == "_INBOX" || strings.HasPrefix(subject, "_INBOX."):
		return refuse("_INBOX subjects carry the replies other clients wait for")
	case !utf8.ValidString(subject):
		return refuse("not valid UTF-8")
	case strings.ContainsAny(subject, "*>"):
		return refuse("a wildcard (* or >) is not a subject to publish to")
	case strings.IndexFunc(subject, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0:
		return refuse("whitespace or a control character")
	case strings.HasPrefix(subject, ".") || strings.HasSuffix(subject, ".") || strings.Contains(subject, ".."):
		return refuse("an empty token")
	}
	return nil
}

// redact hides the passwords and tokens of the comma-separated server URLs in urls.
func redact(urls string) string {
	parts := strings.Split(urls, ",")
	for i, p := range parts {
		u, err := neturl.Parse(strings.TrimSpace(p))
		switch {
		case err != nil:
			parts[i] = "an invalid URL" // which may hold a password
			continue
		case u.User == nil:
			continue
		}
		if _, ok := u.User.Password(); !ok {
			u.User = neturl.User("xxxxx") // a token
		}
		parts[i] = u.Redacted()
	}
	return strings.Join(parts, ",")
}

// classify wraps a publication error, marking those that will never pass as poison.
func classify(m *relay.Message, err error) error {
	wrapped := fmt.Errorf("jobcnats: event %d (%d bytes) to %s: %w", m.ID, len(m.Payload), m.Subject, err)
	var jsErr jetstream.JetStreamError
	switch {
	case errors.Is(err, nats.ErrMaxPayload), errors.Is(err, nats.ErrBadSubject):
		return relay.Poison(wrapped)
	case errors.As(err, &jsErr) && jsErr.APIError() != nil && jsErr.APIError().ErrorCode == jetstream.JSErrCodeStreamMessageExceedsMaximum:
		return relay.Poison(wrapped)
	}
	return wrapped
}

// Close closes the connection Connect opened; after New, it does nothing.
func (s *Sink) Close() error {
	s.closer()
	return nil
}
