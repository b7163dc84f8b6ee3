package runtime

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jobc-dev/jobc/runtime/internal/schema"
)

// replacedUTF8 is what encoding/json writes for a string's invalid UTF-8: it replaces
// the bytes with U+FFFD and writes that escaped (a valid U+FFFD it writes as it is).
// Its absence from an encoding is how the fast path knows, at the cost of one search,
// that every string was UTF-8; its presence sends the value to inexactGo, as the
// escape may also be a json.RawMessage's own.
var replacedUTF8 = []byte(`\ufffd`)

// The rules inexactGo applies to a Go value.
const (
	msgNonFinite   = "NaN or infinity, which JSON cannot hold"
	msgInvalidUTF8 = "invalid UTF-8, which encoding/json would replace with U+FFFD"
)

// encodeExact encodes v, a payload (s its schema) or metadata (s nil), with
// encoding/json and returns the problems that would keep it from reaching a worker as
// it was given: a NaN or infinite float, a string that is not UTF-8 (inexactGo), and
// what schema.Exact finds in the encoding (a NUL, nesting beyond schema.MaxDepth, a
// number its Go type cannot hold). None of them is altered in silence: each is a
// problem at its JSON pointer.
func encodeExact(s *schema.Schema, v any) ([]byte, []Problem, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		var unsupported *json.UnsupportedValueError
		if errors.As(err, &unsupported) {
			if ps := inexactGo(v); ps != nil {
				return nil, ps, nil
			}
		}
		// encoding/json refuses a json.RawMessage nested past its own bound (10000)
		// without a pointer: Exact names where it goes too deep.
		if rm, ok := v.(json.RawMessage); ok {
			if ps := exactProblems(s, rm); ps != nil {
				return nil, ps, nil
			}
		}
		return nil, nil, err
	}
	return raw, encodedProblems(s, raw, v), nil
}

// encodedProblems are the problems of raw, v encoded.
func encodedProblems(s *schema.Schema, raw []byte, v any) []Problem {
	ps := exactProblems(s, raw)
	if bytes.Contains(raw, replacedUTF8) {
		ps = append(inexactGo(v), ps...)
		sort.SliceStable(ps, func(i, j int) bool { return ps[i].Field < ps[j].Field })
	}
	if len(ps) == 0 {
		return nil
	}
	return ps
}

// exactProblems is s.Exact as Problems.
func exactProblems(s *schema.Schema, raw []byte) []Problem {
	ps := s.Exact(raw)
	if len(ps) == 0 {
		return nil
	}
	out := make([]Problem, len(ps))
	for i, p := range ps {
		out[i] = Problem{Field: p.Field, Message: p.Message}
	}
	return out
}

// encodeMetadata encodes a job's or an event's metadata (what is the kind or event),
// refusing what encodeExact refuses with a *PayloadError for the metadata.
func encodeMetadata(what string, metadata map[string]any) ([]byte, error) {
	meta, ps, err := encodeExact(nil, metadata)
	if err != nil {
		return nil, fmt.Errorf("encode metadata: %w", err)
	}
	if len(ps) > 0 {
		return nil, &PayloadError{Kind: what, Metadata: true, Problems: ps}
	}
	return meta, nil
}

// maxWalkDepth bounds inexactGo's walk, which a cyclic value would not end.
const maxWalkDepth = 2 * schema.MaxDepth

// inexactGo finds, in a Go value, the floats encoding/json refuses (NaN, infinities)
// and the strings and map keys it would alter (invalid UTF-8), and returns a problem
// at the JSON pointer of each, as encoding/json would write v. It runs only once the
// encoding shows one may be there: the pointers are worth a walk then. It follows
// encoding/json's names (the json tag, else the field's name; "-" skips; untagged
// embedded structs are flattened) and leaves values that encode themselves
// (json.Marshaler, encoding.TextMarshaler) alone.
func inexactGo(v any) []Problem {
	var w goWalk
	w.walk(reflect.ValueOf(v), "", 0)
	sort.SliceStable(w.problems, func(i, j int) bool { return w.problems[i].Field < w.problems[j].Field })
	return w.problems
}

type goWalk struct{ problems []Problem }

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

func (w *goWalk) walk(v reflect.Value, at string, depth int) {
	if !v.IsValid() || depth > maxWalkDepth {
		return
	}
	if t := v.Type(); t.Implements(marshalerType) || t.Implements(textMarshalerType) {
		return
	}
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		if f := v.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
			w.problems = append(w.problems, Problem{Field: at, Message: msgNonFinite})
		}
	case reflect.String:
		if !utf8.ValidString(v.String()) {
			w.problems = append(w.problems, Problem{Field: at, Message: msgInvalidUTF8})
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			w.walk(v.Elem(), at, depth+1)
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return // base64
		}
		for i := range v.Len() {
			w.walk(v.Index(i), at+"/"+strconv.Itoa(i), depth+1)
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			name := fmt.Sprint(iter.Key().Interface())
			field := at + "/" + strings.ToValidUTF8(name, "\uFFFD")
			if iter.Key().Kind() == reflect.String && !utf8.ValidString(name) {
				w.problems = append(w.problems, Problem{Field: field, Message: msgInvalidUTF8 + " (in the key)"})
			}
			w.walk(iter.Value(), field, depth+1)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" || !f.IsExported() && !f.Anonymous {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			field := at + "/" + name
			switch {
			case name != "":
			case f.Anonymous && f.Type.Kind() == reflect.Struct:
				field = at // its fields are the struct's own
			default:
				field = at + "/" + f.Name
			}
			w.walk(v.Field(i), field, depth+1)
		}
	}
}
