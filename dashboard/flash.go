package dashboard

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/url"
)

// An action ends with a redirect to a page that shows what it did at its top: the
// message travels in the query ("flash"), with an HMAC of it under a key of this
// process ("fs"). A page shows the message only when the HMAC is right, so a link of
// someone else's making cannot put its own text in the dashboard's banner; after a
// restart the old messages are simply not shown.
const (
	flashParam = "flash"
	flashSig   = "fs"
)

type flasher struct {
	key []byte
}

func newFlasher() (*flasher, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("dashboard: flash key: %w", err)
	}
	return &flasher{key: key}, nil
}

func (f *flasher) sign(msg string) string {
	m := hmac.New(sha256.New, f.key)
	m.Write([]byte("jobc flash\x00" + msg))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// set puts msg and its signature in q.
func (f *flasher) set(q url.Values, msg string) {
	q.Set(flashParam, msg)
	q.Set(flashSig, f.sign(msg))
}

// get returns the message of q when this process signed it, else "".
func (f *flasher) get(q url.Values) string {
	msg, sig := q.Get(flashParam), q.Get(flashSig)
	if msg == "" || !hmac.Equal([]byte(sig), []byte(f.sign(msg))) {
		return ""
	}
	return msg
}
