package runtime

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// upcastTo validates a payload of version from and upcasts it to version to. When the
// result fails version to's schema, it is returned with the error.
func (jt *JobType) upcastTo(from, to int, payload []byte) ([]byte, error) {
	if err := jt.Validate(from, payload); err != nil {
		return nil, err
	}
	for _, v := range jt.Versions {
		if v.Number <= from || v.Number > to || v.Upcast == nil {
			continue
		}
		in, err := jt.fillVersionDefaults(v.Number-1, payload)
		if err != nil {
			return nil, err
		}
		up, err := v.Upcast(in)
		if err != nil {
			return nil, fmt.Errorf("upcast %s payload from version %d to %d: %w", jt.Kind, v.Number-1, v.Number, err)
		}
		payload = up
	}
	if from != to {
		// A version may make a property required with a default (compatible: see
		// package compat), which an older payload lacks until it is filled in.
		var err error
		if payload, err = jt.fillVersionDefaults(to, payload); err != nil {
			return nil, err
		}
		if err := jt.Validate(to, payload); err != nil {
			// The invalid result goes with the error, for CheckUpcast to show.
			return payload, fmt.Errorf("after upcasting from version %d: %w", from, err)
		}
	}
	return payload, nil
}

// decode turns a stored payload of any version this build knows into the newest
// version's JSON: it validates the payload against its own version's schema, upcasts it
// one version at a time (validating the result against the newest schema), and fills
// in schema defaults for absent properties.
func (jt *JobType) decode(version int, payload []byte) ([]byte, error) {
	newest := jt.maxVersion()
	payload, err := jt.upcastTo(version, newest, payload)
	if err != nil {
		return nil, err
	}
	if jt.defaults[newest] {
		return withDefaults(payload, jt.schemas[newest])
	}
	return payload, nil
}

// fillVersionDefaults fills in the defaults of version n's schema.
func (jt *JobType) fillVersionDefaults(n int, payload []byte) ([]byte, error) {
	if !jt.defaults[n] {
		return payload, nil
	}
	return withDefaults(payload, jt.schemas[n])
}

func hasDefaults(s *jsonschema.Schema, seen map[*jsonschema.Schema]bool) bool {
	if s == nil || seen[s] {
		return false
	}
	seen[s] = true
	if s.Default != nil {
		return true
	}
	if hasDefaults(s.Ref, seen) {
		return true
	}
	for _, p := range s.Properties {
		if hasDefaults(p, seen) {
			return true
		}
	}
	if hasDefaults(s.Items2020, seen) {
		return true
	}
	if ap, ok := s.AdditionalProperties.(*jsonschema.Schema); ok && hasDefaults(ap, seen) {
		return true
	}
	return false
}

// withDefaults sets every absent property that has a default in s.
func withDefaults(payload []byte, s *jsonschema.Schema) ([]byte, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(payload))
	if err != nil {
		return nil, err
	}
	fillDefaults(doc, s)
	return json.Marshal(doc)
}

func fillDefaults(v any, s *jsonschema.Schema) {
	for s != nil && s.Ref != nil {
		s = s.Ref
	}
	if s == nil {
		return
	}
	switch v := v.(type) {
	case map[string]any:
		for name, ps := range s.Properties {
			cur, ok := v[name]
			if !ok {
				if d := defaultOf(ps); d != nil {
					v[name] = *d
				}
				continue
			}
			fillDefaults(cur, ps)
		}
		if ap, ok := s.AdditionalProperties.(*jsonschema.Schema); ok {
			for name, cur := range v {
				if _, known := s.Properties[name]; !known {
					fillDefaults(cur, ap)
				}
			}
		}
	case []any:
		for _, e := range v {
			fillDefaults(e, s.Items2020)
		}
	}
}

func defaultOf(s *jsonschema.Schema) *any {
	for s != nil && s.Default == nil && s.Ref != nil {
		s = s.Ref
	}
	if s == nil {
		return nil
	}
	return s.Default
}

// decoder validates a stored payload of any version jt knows, upcasts it to the newest
// version and decodes it into T.
func decoder[T any](jt *JobType) func(version int, payload []byte) (T, error) {
	return func(version int, payload []byte) (T, error) {
		var p T
		newest, err := jt.decode(version, payload)
		if err != nil {
			return p, &ClassError{Class: classInvalidPayload, Err: err}
		}
		if err := json.Unmarshal(newest, &p); err != nil {
			return p, &ClassError{Class: classInvalidPayload, Err: fmt.Errorf("decode %s payload (version %d): %w", jt.Kind, version, err)}
		}
		return p, nil
	}
}
