package runtime

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"

	"github.com/jobc-dev/jobc/runtime/internal/schema"
)

// upcastTo validates a payload of version from and upcasts it to version to. When only
// the result fails version to's schema, it is returned with the error.
func (jt *JobType) upcastTo(from, to int, payload []byte) ([]byte, error) {
	_, up, err := jt.upcastDoc(from, to, payload)
	return up, err
}

// upcastDoc is upcastTo that also returns the decoded, validated document of the
// result. Before each step, and before the result is validated, the defaults of the
// version at hand are filled in: a version may make a property required with a default
// (compatible: see package compat), which an older payload lacks until then.
func (jt *JobType) upcastDoc(from, to int, payload []byte) (any, []byte, error) {
	doc, err := jt.parse(from, payload)
	if err != nil {
		return nil, nil, err
	}
	if from == to {
		return doc, payload, nil
	}
	for _, v := range jt.Versions {
		if v.Number <= from || v.Number > to || v.Upcast == nil {
			continue
		}
		in, err := jt.fillVersionDefaults(v.Number-1, payload)
		if err != nil {
			return nil, nil, err
		}
		up, err := v.Upcast(in)
		if err != nil {
			return nil, nil, fmt.Errorf("upcast %s payload from version %d to %d: %w", jt.Kind, v.Number-1, v.Number, err)
		}
		payload = up
	}
	if payload, err = jt.fillVersionDefaults(to, payload); err != nil {
		return nil, nil, err
	}
	if doc, err = jt.parse(to, payload); err != nil {
		// The invalid result goes with the error, for CheckUpcast to show.
		return nil, payload, fmt.Errorf("after upcasting from version %d: %w", from, err)
	}
	return doc, payload, nil
}

// fillVersionDefaults fills in the defaults of version n's schema.
func (jt *JobType) fillVersionDefaults(n int, payload []byte) ([]byte, error) {
	s, ok := jt.schemas[n]
	if !ok || !s.HasDefaults() {
		return payload, nil
	}
	return withDefaults(payload, s)
}

// decode turns a stored payload of any version this build knows into the newest
// version's JSON: it validates the payload against its own version's schema, upcasts it
// one version at a time (validating the result against the newest schema), and fills
// in schema defaults for absent properties. A payload of the newest version that has
// every defaulted property is returned as it was stored; when Check vouches for it, it
// is not decoded here at all, and the caller's json.Unmarshal is its only parse. Any
// other payload, and any Check is unsure of, is decoded (once if it needs no upcast),
// which gives the tree validator's errors.
func (jt *JobType) decode(version int, payload []byte) ([]byte, error) {
	newest := jt.maxVersion()
	if version == newest && jt.schemas[newest].Check(payload) == schema.Valid {
		return payload, nil
	}
	doc, payload, err := jt.upcastDoc(version, newest, payload)
	if err != nil {
		return nil, err
	}
	if jt.schemas[newest].FillDefaults(doc) {
		return json.Marshal(doc)
	}
	return payload, nil
}

// withDefaults sets every absent property that has a default in s.
func withDefaults(payload []byte, s *schema.Schema) ([]byte, error) {
	doc, err := schema.Decode(payload)
	if err != nil {
		return nil, err
	}
	s.FillDefaults(doc)
	return json.Marshal(doc)
}

// decoder validates a stored payload of any version jt knows, upcasts it to the newest
// version and decodes it into T.
func decoder[T any](jt *JobType) func(version int, payload []byte) (T, error) {
	unmarshal := unmarshalerFor[T]()
	return func(version int, payload []byte) (T, error) {
		var p T
		newest, err := jt.decode(version, payload)
		if err != nil {
			return p, &ClassError{Class: classInvalidPayload, Err: err}
		}
		if err := unmarshal(newest, &p); err != nil {
			return p, &ClassError{Class: classInvalidPayload, Err: fmt.Errorf("decode %s payload (version %d): %w", jt.Kind, version, err)}
		}
		return p, nil
	}
}

// unmarshalerFor returns how a payload is decoded into a T: with json.Unmarshal, or,
// when T holds an interface anywhere (an untyped value, an open object's
// map[string]any), with numbers decoded as json.Number. encoding/json would make them
// float64, which holds integers exactly only up to 2^53, so an id of 2^53+1 would
// reach the handler as another; a json.Number keeps the number's text as stored.
// Typed fields (int64, float64) decode as they always do.
func unmarshalerFor[T any]() func(data []byte, v any) error {
	if !holdsInterface(reflect.TypeFor[T](), 0) {
		return json.Unmarshal
	}
	return func(data []byte, v any) error {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if err := dec.Decode(v); err != nil {
			return err
		}
		if _, err := dec.Token(); err != io.EOF {
			return errors.New("invalid character after top-level value")
		}
		return nil
	}
}

// holdsInterface says whether a value of type t can hold an interface value that
// encoding/json fills in. A type that refers to itself is followed maxTypeDepth deep.
func holdsInterface(t reflect.Type, depth int) bool {
	if depth > maxTypeDepth {
		return false
	}
	if t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) {
		return false
	}
	switch t.Kind() {
	case reflect.Interface:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		return holdsInterface(t.Elem(), depth+1)
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); (f.IsExported() || f.Anonymous) && holdsInterface(f.Type, depth+1) {
				return true
			}
		}
	}
	return false
}

// maxTypeDepth bounds holdsInterface's walk: generated payload types nest no deeper
// than their schemas, which payloads' MaxDepth bounds.
const maxTypeDepth = 2 * schema.MaxDepth

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
