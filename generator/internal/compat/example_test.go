package compat_test

import (
	"encoding/json"
	"fmt"

	"github.com/jobc-dev/jobc/generator/internal/compat"
)

// ExampleCheck compares version 1 of a job payload schema with a proposed
// version 2. Relaxing "age" is fine, but shortening "email", requiring a new
// property and closing the object are not: version 2 needs an upcast.
func ExampleCheck() {
	v1 := `{
	  "type": "object",
	  "properties": {
	    "email": {"type": "string", "maxLength": 200},
	    "age":   {"type": "integer", "minimum": 18}
	  },
	  "required": ["email"]
	}`
	v2 := `{
	  "type": "object",
	  "properties": {
	    "email":  {"type": "string", "maxLength": 100, "description": "contact address"},
	    "age":    {"type": ["number", "null"], "minimum": 0},
	    "locale": {"type": "string"}
	  },
	  "required": ["email", "locale"],
	  "additionalProperties": false
	}`
	var oldSchema, newSchema any
	if err := json.Unmarshal([]byte(v1), &oldSchema); err != nil {
		panic(err)
	}
	if err := json.Unmarshal([]byte(v2), &newSchema); err != nil {
		panic(err)
	}

	for _, f := range compat.Check(oldSchema, newSchema) {
		fmt.Printf("%s at %s\n  %s\n", f.Rule, f.Path, f.Message)
	}
	fmt.Println("compatible:", compat.Compatible(oldSchema, newSchema))

	// Dropping the new requirements makes the change safe.
	fmt.Println("reverse direction of the age change compatible:",
		compat.Compatible(
			map[string]any{"type": "integer", "minimum": 18.0},
			map[string]any{"type": []any{"number", "null"}, "minimum": 0.0},
		))
	// Output:
	// ADDITIONAL_PROPERTIES_REMOVED at /additionalProperties
	//   root schema: additionalProperties is now false; old documents with properties the new schema does not list are rejected
	// MAX_LENGTH_DECREASED at /properties/email/maxLength
	//   property "email": maxLength decreased from 200 to 100
	// REQUIRED_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL at /properties/locale
	//   property "locale": required property added to an open content model; old documents without it are rejected
	// compatible: false
	// reverse direction of the age change compatible: true
}
