package jobckafka

import (
	"context"
	"testing"
)

// ProducerID returns the idempotent producer id and epoch of the sink's client.
func ProducerID(t *testing.T, s *Sink) (int64, int16, error) {
	return s.client.ProducerID(context.Background())
}
