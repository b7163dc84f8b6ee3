package runtime

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Upcast turns a payload of one version into the next version's JSON.
type Upcast func(payload []byte) ([]byte, error)

// Change is one declarative upcast step; Changes combines them into an Upcast.
// Generated code builds them from a version's `changes:` list.
type Change func(doc map[string]any) error

// Changes applies the steps in order to the payload's JSON object.
func Changes(steps ...Change) Upcast {
	return func(payload []byte) ([]byte, error) {
		var doc map[string]any
		dec := json.NewDecoder(bytes.NewReader(payload))
		dec.UseNumber()
		if err := dec.Decode(&doc); err != nil {
			return nil, fmt.Errorf("payload is not a JSON object: %w", err)
		}
		for _, step := range steps {
			if err := step(doc); err != nil {
				return nil, err
			}
		}
		return json.Marshal(doc)
	}
}

// parent walks a dotted path ("address.zip") to the object holding its last element.
// It returns nil when an intermediate object is absent.
func parent(doc map[string]any, path string) (map[string]any, string, error) {
	parts := strings.Split(path, ".")
	cur := doc
	for _, p := range parts[:len(parts)-1] {
		next, ok := cur[p]
		if !ok || next == nil {
			return nil, "", nil
		}
		obj, ok := next.(map[string]any)
		if !ok {
			return nil, "", fmt.Errorf("field %q is not an object", p)
		}
		cur = obj
	}
	return cur, parts[len(parts)-1], nil
}

// RenameField moves the value of field from to field to. Both are dotted paths within
// the same object ("email" → "recipient", "address.zip" → "address.postal_code").
func RenameField(from, to string) Change {
	return func(doc map[string]any) error {
		obj, name, err := parent(doc, from)
		if err != nil || obj == nil {
			return err
		}
		v, ok := obj[name]
		if !ok {
			return nil
		}
		dst, newName, err := parent(doc, to)
		if err != nil {
			return err
		}
		if dst == nil {
			return fmt.Errorf("rename %s to %s: the target's object is absent", from, to)
		}
		delete(obj, name)
		dst[newName] = v
		return nil
	}
}

// AddField sets field to the JSON value def when the payload lacks it.
func AddField(field string, def json.RawMessage) Change {
	return func(doc map[string]any) error {
		obj, name, err := parent(doc, field)
		if err != nil || obj == nil {
			return err
		}
		if _, ok := obj[name]; ok {
			return nil
		}
		var v any
		dec := json.NewDecoder(bytes.NewReader(def))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("add %s: bad default: %w", field, err)
		}
		obj[name] = v
		return nil
	}
}

// RemoveField deletes field.
func RemoveField(field string) Change {
	return func(doc map[string]any) error {
		obj, name, err := parent(doc, field)
		if err != nil || obj == nil {
			return err
		}
		delete(obj, name)
		return nil
	}
}

// UpcastFunc adapts a hand-written, typed upcaster to an Upcast: the payload is decoded
// into From, converted, and encoded from To.
func UpcastFunc[From, To any](f func(From) (To, error)) Upcast {
	unmarshal := unmarshalerFor[From]()
	return func(payload []byte) ([]byte, error) {
		var in From
		if err := unmarshal(payload, &in); err != nil {
			return nil, err
		}
		out, err := f(in)
		if err != nil {
			return nil, err
		}
		return json.Marshal(out)
	}
}
