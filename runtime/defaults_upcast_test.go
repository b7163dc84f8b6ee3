package runtime_test

import (
	"context"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/runtime"
)

// Version 2 makes locale, optional in version 1, required with a default, and adds
// channel, required with a default; version 3 is upcast by a function, which must see
// version 2's defaults. Versions 1→2 have no upcast: generator/internal/compat calls them
// compatible (REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED,
// REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL), as Confluent does.
const (
	noticeV1 = `{"type":"object","additionalProperties":false,"required":["user"],
		"properties":{"user":{"type":"integer"},"locale":{"type":"string"}}}`
	noticeV2 = `{"type":"object","additionalProperties":false,"required":["user","locale","channel"],
		"properties":{"user":{"type":"integer"},"locale":{"type":"string","default":"en"},
		"channel":{"type":"string","enum":["email","sms"],"default":"email"}}}`
	noticeV3 = `{"type":"object","additionalProperties":false,"required":["user","address"],
		"properties":{"user":{"type":"integer"},"address":{"type":"string","minLength":1}}}`
)

type noticeV3Payload struct {
	User    int    `json:"user"`
	Address string `json:"address"`
}

type noticeV2Payload struct {
	User    int    `json:"user"`
	Locale  string `json:"locale"`
	Channel string `json:"channel"`
}

// TestRequiredWithDefaultDecodesOldPayloads: a version 1 payload without locale and
// channel is read as version 2 with both defaults, with no upcast declared, and the
// version 3 upcast receives them filled in.
func TestRequiredWithDefaultDecodesOldPayloads(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	jt, err := runtime.NewJobType(runtime.JobType{
		Kind: "notify", Queue: "notify", Priority: 5, MaxAttempts: 3, WriteVersion: 3,
		Versions: []runtime.Version{
			{Number: 1, Schema: noticeV1},
			{Number: 2, Schema: noticeV2},
			{Number: 3, Schema: noticeV3, Upcast: runtime.UpcastFunc(func(p noticeV2Payload) (noticeV3Payload, error) {
				return noticeV3Payload{User: p.User, Address: p.Channel + ":" + p.Locale}, nil
			})},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts) VALUES
		('notify', 'notify', 'available', 5, 1, '{"user": 1}', 3),
		('notify', 'notify', 'available', 5, 1, '{"user": 2, "locale": "fr"}', 3),
		('notify', 'notify', 'available', 5, 2, '{"user": 3, "locale": "de", "channel": "sms"}', 3)`); err != nil {
		t.Fatal(err)
	}
	w := runtime.NewWorker(pool, testConfig(nil))
	got := make(chan noticeV3Payload, 3)
	if err := runtime.Handle(w, jt, func(_ context.Context, _ *runtime.Job, p noticeV3Payload) error {
		got <- p
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	startWorker(t, w)
	want := map[int]string{1: "email:en", 2: "email:fr", 3: "sms:de"}
	timeout := time.After(10 * time.Second)
	for range want {
		select {
		case p := <-got:
			if want[p.User] != p.Address {
				t.Errorf("user %d: address %q, want %q", p.User, p.Address, want[p.User])
			}
			delete(want, p.User)
		case <-timeout:
			t.Fatalf("jobs not handled: %v", want)
		}
	}
	waitFor(t, "the jobs to complete", 10*time.Second, func() bool {
		return countRows(t, pool, `SELECT count(*) FROM jobc_jobs_finished WHERE state = 'completed'`) == 3
	})
}

// TestRequiredWithDefaultNewest: with version 2 the newest, a version 1 payload is
// filled in before it is validated as version 2 (it used to fail as invalid_payload).
func TestRequiredWithDefaultNewest(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	jt, err := runtime.NewJobType(runtime.JobType{
		Kind: "notify", Queue: "notify", Priority: 5, MaxAttempts: 3, WriteVersion: 2,
		Versions: []runtime.Version{{Number: 1, Schema: noticeV1}, {Number: 2, Schema: noticeV2}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts)
		VALUES ('notify', 'notify', 'available', 5, 1, '{"user": 7}', 3)`); err != nil {
		t.Fatal(err)
	}
	w := runtime.NewWorker(pool, testConfig(nil))
	got := make(chan noticeV2Payload, 1)
	if err := runtime.Handle(w, jt, func(_ context.Context, _ *runtime.Job, p noticeV2Payload) error {
		got <- p
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	startWorker(t, w)
	select {
	case p := <-got:
		if want := (noticeV2Payload{User: 7, Locale: "en", Channel: "email"}); p != want {
			t.Errorf("decoded %+v, want %+v", p, want)
		}
	case <-time.After(10 * time.Second):
		info, _ := runtime.GetJob(ctx, pool, 1)
		t.Fatalf("the job was not handled: %+v", info)
	}
}
