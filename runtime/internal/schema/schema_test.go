package schema_test

import (
	"fmt"
	"testing"

	"github.com/jobc-dev/jobc/runtime/internal/schema"
)

// The messages name the rule and the limit, at the pointer of the offending value.
func TestMessages(t *testing.T) {
	s, err := schema.Compile([]byte(everyKeyword[0]))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := schema.Decode([]byte(`{"a":10,"b":4,"c":[3,3],"d":"€€€€","e":"other","f":2,"g":{},"h":{"k":1},"zz":1}`))
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(s.Validate(doc))
	want := "[{ maxProperties: got 9, want 6} { additional properties 'zz' not allowed} " +
		"{/a exclusiveMaximum: got 10, want less than 10} " +
		"{/b maximum: got 4, want 3} " +
		"{/c uniqueItems: items at 0 and 1 are equal} " +
		"{/d maxLength: got 4, want 3} " +
		"{/e value must be 'fixed'} " +
		"{/f value must be one of 1, 'two', null} " +
		"{/g missing property 'x'} " +
		"{/h/k exclusiveMinimum: got 1, want more than 1}]"
	if got != want {
		t.Errorf("problems\n got %s\nwant %s", got, want)
	}
}

func TestFillDefaults(t *testing.T) {
	s, err := schema.Compile([]byte(`{"type":"object","properties":{
		"n":{"type":"integer","default":3},
		"o":{"type":"object","properties":{"g":{"default":"center"}},"default":{"g":"north"}},
		"l":{"type":"array","items":{"$ref":"#/$defs/i"}}},
		"$defs":{"i":{"type":"object","properties":{"q":{"default":0.5}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ in, want string }{
		{`{}`, `map[n:3 o:map[g:north]]`},
		{`{"n":1,"o":{},"l":[{},{"q":1}]}`, `map[l:[map[q:0.5] map[q:1]] n:1 o:map[g:center]]`},
	} {
		doc, err := schema.Decode([]byte(tc.in))
		if err != nil {
			t.Fatal(err)
		}
		if !s.FillDefaults(doc) {
			t.Errorf("%s: FillDefaults reported no change", tc.in)
		}
		if got := fmt.Sprint(doc); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestCompileRejectsWhatItCannotValidate(t *testing.T) {
	for _, tc := range []struct{ schema, want string }{
		{`{"oneOf":[{"type":"string"}]}`, `schema at "#": keyword oneOf is not supported`},
		{`{"properties":{"a":{"$ref":"other.json"}}}`, `schema at "#/properties/a": $ref "other.json": only references into the same schema (#/...) are supported`},
		{`{"properties":{"a":{"$ref":"#/$defs/none"}}}`, `schema at "#/properties/a": $ref "#/$defs/none": no such schema`},
		{`{"pattern":"(unclosed"}`, "schema at \"#\": pattern: error parsing regexp: missing closing ): `(unclosed`"},
		{`{"minLength":-1}`, `schema at "#": minLength must be a non-negative integer`},
	} {
		_, err := schema.Compile([]byte(tc.schema))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: err = %v, want %s", tc.schema, err, tc.want)
		}
	}
}
