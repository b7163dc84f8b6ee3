package runtime_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/jobc-dev/jobc/runtime"
)

// A worker reads a valid stored payload of the newest version, with every defaulted
// property, without decoding it for validation: its bytes go to the handler's
// json.Unmarshal as stored. Every other payload takes the decoding path, whose result
// and errors are unchanged.
func TestDecodeFastPath(t *testing.T) {
	jt, err := runtime.NewJobType(runtime.JobType{
		Kind: "notice", Queue: "q", MaxAttempts: 1, WriteVersion: 2,
		Versions: []runtime.Version{{Number: 1, Schema: noticeV1}, {Number: 2, Schema: noticeV2}},
	})
	if err != nil {
		t.Fatal(err)
	}
	decode := func(version int, payload string) (noticeV2Payload, error) {
		return runtime.DecodeForTest[noticeV2Payload](jt, version, []byte(payload))
	}
	stored := []byte(`{"user":7,"locale":"fr","channel":"sms"}`)
	// Only json.Unmarshal into the struct allocates; validation adds nothing to it.
	dec := runtime.DecoderForTest[noticeV2Payload](jt) // as a worker does, once
	fast := testing.AllocsPerRun(100, func() {
		if _, err := dec(2, stored); err != nil {
			t.Fatal(err)
		}
	})
	var p noticeV2Payload
	unmarshalOnly := testing.AllocsPerRun(100, func() {
		if err := json.Unmarshal(stored, &p); err != nil {
			t.Fatal(err)
		}
	})
	if fast > unmarshalOnly+1 { // the payload the handler gets, which escapes
		t.Errorf("decoding a valid newest payload allocates %v times, json.Unmarshal alone %v", fast, unmarshalOnly)
	}
	for _, tc := range []struct {
		version int
		payload string
		want    noticeV2Payload
		err     string
	}{
		{2, `{"user":7,"locale":"fr","channel":"sms"}`, noticeV2Payload{7, "fr", "sms"}, ""},
		{2, `{"user":7,"user":8,"locale":"fr","channel":"sms"}`, noticeV2Payload{8, "fr", "sms"}, ""}, // Check is unsure
		{1, `{"user":7}`, noticeV2Payload{7, "en", "email"}, ""},
		{2, `{"user":"7","locale":"fr","channel":"fax"}`, noticeV2Payload{},
			"invalid notice payload (version 2): /channel: value must be one of 'email', 'sms'; /user: got string, want integer"},
		{2, `{"user":7,"locale":"fr","channel":"sms"} x`, noticeV2Payload{},
			"invalid notice payload (version 2): not valid JSON: invalid character after top-level value"},
	} {
		got, err := decode(tc.version, tc.payload)
		var pe *runtime.PayloadError
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.payload, err)
		case tc.err != "" && (!errors.As(err, &pe) || pe.Error() != tc.err):
			t.Errorf("%s: error %v, want %s", tc.payload, err, tc.err)
		case got != tc.want:
			t.Errorf("%s: got %+v, want %+v", tc.payload, got, tc.want)
		}
	}
}

// A payload of the newest version that lacks a defaulted property gets it, through the
// decoding path.
func TestDecodeFillsDefaultsOfTheNewestVersion(t *testing.T) {
	jt, err := runtime.NewJobType(runtime.JobType{
		Kind: "notice", Queue: "q", MaxAttempts: 1, WriteVersion: 1,
		Versions: []runtime.Version{{Number: 1, Schema: `{"type":"object","required":["user"],
			"properties":{"user":{"type":"integer"},"locale":{"type":"string"},"channel":{"type":"string","default":"email"}}}`}},
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := runtime.DecodeForTest[noticeV2Payload](jt, 1, []byte(`{"user":7,"locale":"fr"}`))
	if want := (noticeV2Payload{7, "fr", "email"}); err != nil || got != want {
		t.Errorf("got %+v, %v; want %+v", got, err, want)
	}
}

// Enqueue's encoding validates without decoding when the schema has no defaults, with
// the same errors as the decoding path.
func TestMarshalPayloadFastPath(t *testing.T) {
	jt := emailType(t, nil)
	p := emailPayload{N: 3, Email: "a@example.com"}
	raw, err := runtime.MarshalPayloadForTest(jt, p)
	if err != nil || !bytes.Equal(raw, []byte(`{"n":3,"email":"a@example.com"}`)) {
		t.Errorf("got %s, %v", raw, err)
	}
	// Validation adds no allocation to json.Marshal's.
	encode := testing.AllocsPerRun(100, func() {
		if _, err := runtime.MarshalPayloadForTest(jt, p); err != nil {
			t.Fatal(err)
		}
	})
	marshal := testing.AllocsPerRun(100, func() {
		if _, err := json.Marshal(p); err != nil {
			t.Fatal(err)
		}
	})
	// Under the race detector sync.Pool drops items at random, and both counts vary;
	// make test holds this without it.
	if encode > marshal && !raceEnabled {
		t.Errorf("encoding a valid payload allocates %v times, json.Marshal alone %v", encode, marshal)
	}
	_, err = runtime.MarshalPayloadForTest(jt, emailPayload{N: -1, Email: "a"})
	want := "invalid send_email payload (version 1): /email: minLength: got 1, want 3; /n: minimum: got -1, want 0"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}
