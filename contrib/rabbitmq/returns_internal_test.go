package jobcamqp

import (
	"context"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"
)

// TestReturnsOfAClosedChannel: the returns a channel received before it closed reach
// onReturn, and the closed returns channel (amqp091-go closes it with the channel) ends
// the drain, where a plain receive would succeed forever and spin.
func TestReturnsOfAClosedChannel(t *testing.T) {
	returns := make(chan amqp.Return, 2)
	returns <- amqp.Return{MessageId: "1"}
	returns <- amqp.Return{MessageId: "2"}
	close(returns)
	var got []string
	drainReturns(returns, func(r amqp.Return) { got = append(got, r.MessageId) })
	if len(got) != 2 || got[0] != "1" || got[1] != "2" {
		t.Errorf("drained %q, want [1 2]", got)
	}

	// waitConfirm on a closed returns channel waits for the confirmation, or its context.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := waitConfirm(ctx, &amqp.DeferredConfirmation{}, returns, func(r amqp.Return) {
		t.Errorf("a return from a closed channel: %+v", r)
	}); err == nil {
		t.Error("waitConfirm with its context ended and no confirmation: nil error")
	}
}
