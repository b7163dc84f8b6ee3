//go:build unix

package runtime_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

// imagePayload and imageSchema are a payload with the usual mix: a required string, a
// format, bounded numbers, an enum, defaults, a nested object and an array.
type imagePayload struct {
	ImageID  string   `json:"image_id"`
	Owner    string   `json:"owner"`
	Width    int      `json:"width,omitempty"`
	Quality  float64  `json:"quality,omitempty"`
	Format   string   `json:"format,omitempty"`
	Sizes    []int    `json:"sizes,omitempty"`
	Crop     *imgCrop `json:"crop,omitempty"`
	Requests []string `json:"requests"`
}

type imgCrop struct {
	Gravity string `json:"gravity,omitempty"`
	X       int    `json:"x"`
}

const imageSchema = `{"type":"object","additionalProperties":false,"required":["image_id","owner","requests"],
	"properties":{
	"image_id":{"type":"string","format":"uuid"},
	"owner":{"type":"string","minLength":1,"maxLength":200,"pattern":"^[a-z][a-z0-9_]*$"},
	"width":{"type":"integer","minimum":1,"maximum":4096,"default":1024},
	"quality":{"type":"number","minimum":0,"maximum":1,"default":0.85},
	"format":{"type":"string","enum":["jpeg","png","webp"],"default":"webp"},
	"sizes":{"type":"array","items":{"type":"integer","minimum":1},"uniqueItems":true,"default":[256,512]},
	"crop":{"type":"object","additionalProperties":false,"properties":{
		"gravity":{"type":"string","default":"center"},"x":{"type":"integer"}}},
	"requests":{"type":"array","maxItems":10,"items":{"type":"string"}}}}`

func imageType(b *testing.B) *runtime.JobType {
	jt, err := runtime.NewJobType(runtime.JobType{
		Kind: "resize", Queue: "bench", Priority: 5, MaxAttempts: 3,
		WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: imageSchema}},
	})
	if err != nil {
		b.Fatal(err)
	}
	return jt
}

func image(i int) imagePayload {
	return imagePayload{
		ImageID: "123e4567-e89b-12d3-a456-426614174000", Owner: "user_42", Quality: 0.5,
		Sizes: []int{128, 2000 + i%1000}, Crop: &imgCrop{X: i}, Requests: []string{"a", "b"},
	}
}

// BenchmarkEncodePayload is Enqueue's Go work for one payload, without the database:
// encode it, fill in defaults, validate.
func BenchmarkEncodePayload(b *testing.B) {
	b.Run("email", func(b *testing.B) {
		jt := emailTypeB(b)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := runtime.MarshalPayloadForTest(jt, emailPayload{N: i, Email: "bench@example.com"}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("image", func(b *testing.B) {
		jt := imageType(b)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := runtime.MarshalPayloadForTest(jt, image(i)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkDecodePayload is a worker's Go work for one stored payload before its
// handler runs: validate, fill in defaults, decode into the payload struct.
func BenchmarkDecodePayload(b *testing.B) {
	b.Run("email", func(b *testing.B) {
		jt := emailTypeB(b)
		raw := []byte(`{"email":"bench@example.com","n":7}`)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := runtime.DecodeForTest[emailPayload](jt, 1, raw); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("image", func(b *testing.B) {
		jt := imageType(b)
		raw, err := runtime.MarshalPayloadForTest(jt, image(1))
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := runtime.DecodeForTest[imagePayload](jt, 1, raw); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func emailTypeB(b *testing.B) *runtime.JobType {
	jt, err := runtime.NewJobType(runtime.JobType{
		Kind: "send_email", Queue: "bench", Priority: 5, MaxAttempts: 3,
		WriteVersion: 1, Versions: []runtime.Version{{Number: 1, Schema: emailSchema}},
	})
	if err != nil {
		b.Fatal(err)
	}
	return jt
}

// BenchmarkEnqueueMany inserts batches of 100 jobs, one transaction each, and reports
// the test process's CPU time per job (user + system, from getrusage): the Go side of
// batch enqueue, PostgreSQL's work excluded.
func BenchmarkEnqueueMany(b *testing.B) {
	pool := pgtest.NewSchema(b, migrated)
	ctx := context.Background()
	jt := imageType(b)
	const batch = 100
	ps := make([]imagePayload, batch)
	for i := range ps {
		ps[i] = image(i)
	}
	b.ReportAllocs()
	before := cpuTime(b)
	n := 0
	for b.Loop() {
		if _, err := runtime.EnqueueMany(ctx, pool, jt, ps); err != nil {
			b.Fatal(err)
		}
		n += batch
	}
	b.ReportMetric(float64((cpuTime(b)-before).Nanoseconds())/float64(n), "cpu-ns/job")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/job")
}

func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
