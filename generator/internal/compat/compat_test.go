package compat

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// testCase is one old/new schema pair with the expected verdict. rules is the
// exact list of rule ids reported (compatible when empty); paths and
// oldPaths, when set, are the exact Path / OldPath of each finding in output
// order.
type testCase struct {
	name     string
	old, new string
	rules    []string
	paths    []string
	oldPaths []string
	contains string // substring expected in the first finding's message
}

var cases = []testCase{
	// ---- annotations -------------------------------------------------------
	{name: "annotations only", old: `{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"https://jobc.dev/a/v1","title":"A","type":"object","properties":{"email":{"type":"string","description":"old","default":"x","examples":["a"],"$comment":"c"}}}`,
		new: `{"$schema":"http://json-schema.org/draft-07/schema#","$id":"https://jobc.dev/a/v2","title":"B","type":"object","properties":{"email":{"type":"string","description":"new","default":"y","examples":["b"],"deprecated":true,"readOnly":true,"writeOnly":false}}}`},

	// ---- type --------------------------------------------------------------
	{name: "type integer to number (TYPE_EXTENDED)", old: `{"type":"integer"}`, new: `{"type":"number"}`},
	{name: "type number to integer", old: `{"type":"number"}`, new: `{"type":"integer"}`,
		rules: []string{"TYPE_NARROWED"}, paths: []string{"/type"}, oldPaths: []string{"/type"}},
	{name: "type add null", old: `{"type":"object","properties":{"n":{"type":"string"}}}`, new: `{"type":"object","properties":{"n":{"type":["string","null"]}}}`},
	{name: "type remove null", old: `{"type":"object","properties":{"n":{"type":["string","null"]}}}`, new: `{"type":"object","properties":{"n":{"type":"string"}}}`,
		rules: []string{"TYPE_NARROWED"}, paths: []string{"/properties/n/type"}, contains: `property "n": type narrowed from ["null", "string"] to "string"`},
	{name: "type union branch added", old: `{"type":["string","integer"]}`, new: `{"type":["string","integer","boolean"]}`},
	{name: "type changed", old: `{"type":"object","properties":{"age":{"type":"string"}}}`, new: `{"type":"object","properties":{"age":{"type":"integer"}}}`,
		rules: []string{"TYPE_CHANGED"}, paths: []string{"/properties/age/type"}, contains: `property "age": type changed from "string" to "integer"`},
	{name: "type union changed", old: `{"type":["string","integer"]}`, new: `{"type":["string","boolean"]}`, rules: []string{"TYPE_CHANGED"}},
	{name: "type added where any was allowed", old: `{}`, new: `{"type":"string"}`, rules: []string{"TYPE_NARROWED"}, paths: []string{"/type"}},
	{name: "type removed", old: `{"type":"string"}`, new: `{}`},
	{name: "new schema false", old: `{"type":"string"}`, new: `false`, rules: []string{"TYPE_CHANGED"}, paths: []string{""}},
	{name: "old schema false", old: `false`, new: `{"type":"string","maxLength":1}`},
	{name: "new schema true", old: `{"type":"string","maxLength":1}`, new: `true`},

	// ---- enum / const ------------------------------------------------------
	{name: "enum extended", old: `{"type":"string","enum":["a","b"]}`, new: `{"type":"string","enum":["a","b","c"]}`},
	{name: "enum narrowed", old: `{"type":"object","properties":{"status":{"enum":["new","done","archived"]}}}`, new: `{"type":"object","properties":{"status":{"enum":["new","done"]}}}`,
		rules: []string{"ENUM_ARRAY_NARROWED"}, paths: []string{"/properties/status/enum"}, contains: `property "status": enum no longer accepts "archived"`},
	{name: "enum changed", old: `{"enum":["a","b"]}`, new: `{"enum":["a","c"]}`, rules: []string{"ENUM_ARRAY_CHANGED"}},
	{name: "enum removed", old: `{"type":"string","enum":["a","b"]}`, new: `{"type":"string"}`},
	{name: "enum added", old: `{"type":"string"}`, new: `{"type":"string","enum":["a"]}`, rules: []string{"ENUM_ARRAY_NARROWED"}, paths: []string{"/enum"}},
	{name: "const changed", old: `{"const":"v1"}`, new: `{"const":"v2"}`, rules: []string{"ENUM_ARRAY_CHANGED"}, paths: []string{"/const"}, contains: `const changed from "v1" to "v2"`},
	{name: "const to enum containing it", old: `{"const":"v1"}`, new: `{"enum":["v1","v2"]}`},
	{name: "enum to const", old: `{"enum":["v1","v2"]}`, new: `{"const":"v1"}`, rules: []string{"ENUM_ARRAY_NARROWED"}},
	{name: "enum numbers compare by value", old: `{"enum":[1,2.5]}`, new: `{"enum":[1.0,2.5,3]}`},
	{name: "boolean type to full boolean enum", old: `{"type":"boolean"}`, new: `{"enum":[true,false]}`},
	{name: "untyped enum gains matching type", old: `{"enum":["a","bb"]}`, new: `{"type":"string","enum":["a","bb","c"],"maxLength":2}`},
	{name: "enum value breaks added maxLength", old: `{"enum":["a","bb"]}`, new: `{"type":"string","maxLength":1}`,
		rules: []string{"MAX_LENGTH_ADDED"}, paths: []string{"/maxLength"}},

	// ---- strings -----------------------------------------------------------
	{name: "maxLength decreased", old: `{"type":"object","properties":{"email":{"type":"string","maxLength":200}}}`, new: `{"type":"object","properties":{"email":{"type":"string","maxLength":100}}}`,
		rules: []string{"MAX_LENGTH_DECREASED"}, paths: []string{"/properties/email/maxLength"}, oldPaths: []string{"/properties/email/maxLength"},
		contains: `property "email": maxLength decreased from 200 to 100`},
	{name: "maxLength increased", old: `{"type":"string","maxLength":100}`, new: `{"type":"string","maxLength":200}`},
	{name: "maxLength added", old: `{"type":"string"}`, new: `{"type":"string","maxLength":10}`, rules: []string{"MAX_LENGTH_ADDED"}},
	{name: "maxLength removed", old: `{"type":"string","maxLength":10}`, new: `{"type":"string"}`},
	{name: "minLength increased", old: `{"type":"string","minLength":1}`, new: `{"type":"string","minLength":3}`, rules: []string{"MIN_LENGTH_INCREASED"}, paths: []string{"/minLength"}},
	{name: "minLength decreased", old: `{"type":"string","minLength":3}`, new: `{"type":"string","minLength":1}`},
	{name: "minLength added", old: `{"type":"string"}`, new: `{"type":"string","minLength":1}`, rules: []string{"MIN_LENGTH_ADDED"}},
	{name: "minLength 0 added is a no-op", old: `{"type":"string"}`, new: `{"type":"string","minLength":0}`},
	{name: "minLength removed", old: `{"type":"string","minLength":1}`, new: `{"type":"string"}`},
	{name: "pattern added", old: `{"type":"string"}`, new: `{"type":"string","pattern":"^[a-z]+$"}`, rules: []string{"PATTERN_ADDED"}, paths: []string{"/pattern"}},
	{name: "pattern changed", old: `{"type":"string","pattern":"^[a-z]+$"}`, new: `{"type":"string","pattern":"^[a-z0-9]+$"}`, rules: []string{"PATTERN_CHANGED"}},
	{name: "pattern removed", old: `{"type":"string","pattern":"^[a-z]+$"}`, new: `{"type":"string"}`},
	{name: "pattern added but every old enum value matches", old: `{"enum":["ab","cd"]}`, new: `{"type":"string","pattern":"^[a-z]{2}$"}`},
	{name: "format added", old: `{"type":"string"}`, new: `{"type":"string","format":"email"}`, rules: []string{"FORMAT_ADDED"}, paths: []string{"/format"}},
	{name: "format changed", old: `{"type":"string","format":"email"}`, new: `{"type":"string","format":"uri"}`, rules: []string{"FORMAT_CHANGED"}},
	{name: "format removed", old: `{"type":"string","format":"email"}`, new: `{"type":"string"}`},
	{name: "string keywords ignored for a non-string type", old: `{"type":"integer"}`, new: `{"type":"integer","maxLength":2,"pattern":"x"}`},

	// ---- numbers -----------------------------------------------------------
	{name: "minimum increased", old: `{"type":"number","minimum":0}`, new: `{"type":"number","minimum":1}`, rules: []string{"MINIMUM_INCREASED"}, paths: []string{"/minimum"}, contains: "minimum increased from 0 to 1"},
	{name: "minimum decreased", old: `{"type":"number","minimum":1}`, new: `{"type":"number","minimum":0}`},
	{name: "minimum added", old: `{"type":"number"}`, new: `{"type":"number","minimum":0}`, rules: []string{"MINIMUM_ADDED"}},
	{name: "minimum removed", old: `{"type":"number","minimum":0}`, new: `{"type":"number"}`},
	{name: "maximum decreased", old: `{"type":"integer","maximum":10}`, new: `{"type":"integer","maximum":5}`, rules: []string{"MAXIMUM_DECREASED"}, paths: []string{"/maximum"}},
	{name: "maximum increased", old: `{"type":"integer","maximum":5}`, new: `{"type":"integer","maximum":10}`},
	{name: "maximum added", old: `{"type":"integer"}`, new: `{"type":"integer","maximum":10}`, rules: []string{"MAXIMUM_ADDED"}},
	{name: "exclusiveMinimum increased", old: `{"type":"number","exclusiveMinimum":0}`, new: `{"type":"number","exclusiveMinimum":1}`, rules: []string{"EXCLUSIVE_MINIMUM_INCREASED"}},
	{name: "exclusiveMinimum added", old: `{"type":"number"}`, new: `{"type":"number","exclusiveMinimum":0}`, rules: []string{"EXCLUSIVE_MINIMUM_ADDED"}, paths: []string{"/exclusiveMinimum"}},
	{name: "exclusiveMaximum decreased", old: `{"type":"number","exclusiveMaximum":10}`, new: `{"type":"number","exclusiveMaximum":9.5}`, rules: []string{"EXCLUSIVE_MAXIMUM_DECREASED"}},
	{name: "exclusiveMaximum added", old: `{"type":"number"}`, new: `{"type":"number","exclusiveMaximum":10}`, rules: []string{"EXCLUSIVE_MAXIMUM_ADDED"}},
	{name: "exclusiveMaximum removed", old: `{"type":"number","exclusiveMaximum":10}`, new: `{"type":"number"}`},
	{name: "minimum 5 to exclusiveMinimum 4", old: `{"type":"number","minimum":5}`, new: `{"type":"number","exclusiveMinimum":4}`},
	{name: "minimum 5 to exclusiveMinimum 5", old: `{"type":"number","minimum":5}`, new: `{"type":"number","exclusiveMinimum":5}`, rules: []string{"EXCLUSIVE_MINIMUM_ADDED"}},
	{name: "integer exclusiveMinimum 4 to minimum 5", old: `{"type":"integer","exclusiveMinimum":4}`, new: `{"type":"integer","minimum":5}`},
	{name: "draft-4 boolean exclusiveMaximum added", old: `{"type":"number","maximum":10}`, new: `{"type":"number","maximum":10,"exclusiveMaximum":true}`,
		rules: []string{"EXCLUSIVE_MAXIMUM_ADDED"}, paths: []string{"/exclusiveMaximum"}},
	{name: "multipleOf added", old: `{"type":"number"}`, new: `{"type":"number","multipleOf":2}`, rules: []string{"MULTIPLE_OF_ADDED"}, paths: []string{"/multipleOf"}},
	{name: "multipleOf expanded", old: `{"type":"number","multipleOf":2}`, new: `{"type":"number","multipleOf":4}`, rules: []string{"MULTIPLE_OF_EXPANDED"}},
	{name: "multipleOf reduced", old: `{"type":"number","multipleOf":4}`, new: `{"type":"number","multipleOf":2}`},
	{name: "multipleOf changed", old: `{"type":"number","multipleOf":3}`, new: `{"type":"number","multipleOf":2}`, rules: []string{"MULTIPLE_OF_CHANGED"}},
	{name: "multipleOf removed", old: `{"type":"number","multipleOf":3}`, new: `{"type":"number"}`},
	{name: "integer gains multipleOf 1", old: `{"type":"integer"}`, new: `{"type":"integer","multipleOf":1}`},
	{name: "decimal multipleOf reduced exactly", old: `{"type":"number","multipleOf":0.5}`, new: `{"type":"number","multipleOf":0.1}`},
	{name: "enum numbers inside added bounds", old: `{"enum":[2,4]}`, new: `{"type":"integer","minimum":1,"maximum":4,"multipleOf":2}`},

	// ---- objects: open content model ---------------------------------------
	{name: "optional property added to open content model", old: `{"type":"object","properties":{"id":{"type":"integer"}}}`,
		new:   `{"type":"object","properties":{"id":{"type":"integer"},"nickname":{"type":"string"}}}`,
		rules: []string{"OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL"}, paths: []string{"/properties/nickname"}, oldPaths: []string{""}},
	{name: "property with empty schema added to open content model", old: `{"type":"object","properties":{"id":{"type":"integer"}}}`,
		new: `{"type":"object","properties":{"id":{"type":"integer"},"extra":{"description":"anything"},"other":true}}`},
	{name: "required property added to open content model", old: `{"type":"object","properties":{"id":{"type":"integer"}}}`,
		new:   `{"type":"object","properties":{"id":{"type":"integer"},"name":{"type":"string"}},"required":["name"]}`,
		rules: []string{"REQUIRED_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL"}, paths: []string{"/properties/name"}},
	{name: "required property with default added to open content model", old: `{"type":"object"}`,
		new:   `{"type":"object","properties":{"name":{"type":"string","default":"x"}},"required":["name"]}`,
		rules: []string{"REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_OPEN_CONTENT_MODEL"}},
	{name: "property removed from open content model", old: `{"type":"object","properties":{"id":{"type":"integer"},"legacy":{"type":"string"}}}`,
		new: `{"type":"object","properties":{"id":{"type":"integer"}}}`},

	// ---- objects: closed content model -------------------------------------
	{name: "optional property added to closed content model", old: `{"type":"object","properties":{"id":{"type":"integer"}},"additionalProperties":false}`,
		new: `{"type":"object","properties":{"id":{"type":"integer"},"nickname":{"type":"string"}},"additionalProperties":false}`},
	{name: "required property added to closed content model", old: `{"type":"object","properties":{"id":{"type":"integer"}},"additionalProperties":false}`,
		new:   `{"type":"object","properties":{"id":{"type":"integer"},"name":{"type":"string"}},"required":["name"],"additionalProperties":false}`,
		rules: []string{"REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL"}, paths: []string{"/properties/name"}},
	// Compatible, as for Confluent: the worker fills the default in.
	{name: "required property with default added to closed content model", old: `{"type":"object","properties":{},"additionalProperties":false}`,
		new: `{"type":"object","properties":{"name":{"type":"string","default":""}},"required":["name"],"additionalProperties":false}`},
	{name: "required property with default added to a nested closed model", old: `{"type":"object","properties":{"to":{"type":"array","items":{"type":"object","properties":{},"additionalProperties":false}}}}`,
		new: `{"type":"object","properties":{"to":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string","default":""}},"required":["name"],"additionalProperties":false}}}}`},
	// Not under a combinator: the worker does not fill defaults in there.
	{name: "required property with default added to closed content model under anyOf", old: `{"anyOf":[{"type":"object","properties":{},"additionalProperties":false}]}`,
		new:      `{"anyOf":[{"type":"object","properties":{"name":{"type":"string","default":""}},"required":["name"],"additionalProperties":false}]}`,
		rules:    []string{"REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL"},
		contains: "its default is not filled in under anyOf"},
	{name: "property removed from closed content model", old: `{"type":"object","properties":{"id":{"type":"integer"},"legacy":{"type":"string"}},"additionalProperties":false}`,
		new:   `{"type":"object","properties":{"id":{"type":"integer"}},"additionalProperties":false}`,
		rules: []string{"PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL"}, paths: []string{"/properties"}, oldPaths: []string{"/properties/legacy"},
		contains: `property "legacy": property removed from a closed content model`},
	{name: "property with false schema removed from closed content model", old: `{"type":"object","properties":{"id":{"type":"integer"},"gone":false},"additionalProperties":false}`,
		new: `{"type":"object","properties":{"id":{"type":"integer"}},"additionalProperties":false}`},

	// ---- objects: partially open content model -----------------------------
	{name: "property added covered by additionalProperties schema", old: `{"type":"object","additionalProperties":{"type":"string"}}`,
		new: `{"type":"object","properties":{"tag":{"type":"string"}},"additionalProperties":{"type":"string"}}`},
	// Every old value under the new name satisfied the typed additionalProperties,
	// which the new property schema accepts: compatible wherever the map is.
	{name: "property added wider than additionalProperties schema", old: `{"type":"object","required":["id"],"properties":{"id":{"type":"string"}},"additionalProperties":{"type":"integer","minimum":0}}`,
		new: `{"type":"object","required":["id"],"properties":{"id":{"type":"string"},"count":{"type":["number","null"],"description":"any count"}},"additionalProperties":{"type":"integer","minimum":0}}`},
	{name: "property added covered by additionalProperties of a map in $defs", old: `{"type":"object","properties":{"labels":{"type":"array","items":{"$ref":"#/$defs/labels"}}},"$defs":{"labels":{"type":"object","additionalProperties":{"$ref":"#/$defs/label"}},"label":{"type":"string","maxLength":9}}}`,
		new: `{"type":"object","properties":{"labels":{"type":"array","items":{"$ref":"#/$defs/labels"}}},"$defs":{"labels":{"type":"object","properties":{"env":{"type":"string"}},"additionalProperties":{"$ref":"#/$defs/label"}},"label":{"type":"string","maxLength":9}}}`},
	{name: "property added not covered by additionalProperties schema", old: `{"type":"object","additionalProperties":{"type":"string"}}`,
		new:   `{"type":"object","properties":{"count":{"type":"integer"}},"additionalProperties":{"type":"string"}}`,
		rules: []string{"PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"}, paths: []string{"/properties/count"}, oldPaths: []string{"/additionalProperties"}},
	{name: "property removed covered by additionalProperties schema", old: `{"type":"object","properties":{"tag":{"type":"string","maxLength":5}},"additionalProperties":{"type":"string"}}`,
		new: `{"type":"object","additionalProperties":{"type":"string"}}`},
	{name: "property removed not covered by additionalProperties schema", old: `{"type":"object","properties":{"count":{"type":"integer"}},"additionalProperties":{"type":"string"}}`,
		new:   `{"type":"object","additionalProperties":{"type":"string"}}`,
		rules: []string{"PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"}, paths: []string{""}, oldPaths: []string{"/properties/count"}},
	{name: "property added narrower than the matching patternProperties", old: `{"type":"object","patternProperties":{"^x_":{"type":"string"}},"additionalProperties":false}`,
		new:   `{"type":"object","properties":{"x_id":{"type":"string","maxLength":3}},"patternProperties":{"^x_":{"type":"string"}},"additionalProperties":false}`,
		rules: []string{"PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"}},
	{name: "property added matching a pattern with the same schema", old: `{"type":"object","patternProperties":{"^x_":{"type":"string"}},"additionalProperties":false}`,
		new: `{"type":"object","properties":{"x_id":{"type":"string"}},"patternProperties":{"^x_":{"type":"string"}},"additionalProperties":false}`},
	{name: "property added outside patternProperties is open", old: `{"type":"object","patternProperties":{"^x_":{"type":"string"}}}`,
		new:   `{"type":"object","properties":{"id":{"type":"integer"}},"patternProperties":{"^x_":{"type":"string"}}}`,
		rules: []string{"OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL"}},
	{name: "patternProperties added to open model", old: `{"type":"object"}`, new: `{"type":"object","patternProperties":{"^x_":{"type":"string"}}}`,
		rules: []string{"ADDITIONAL_PROPERTIES_NARROWED"}, paths: []string{"/patternProperties/^x_"}},
	{name: "patternProperties added to closed model", old: `{"type":"object","properties":{"id":{}},"additionalProperties":false}`,
		new: `{"type":"object","properties":{"id":{}},"patternProperties":{"^x_":{"type":"string"}},"additionalProperties":false}`},
	{name: "patternProperties removed from closed model", old: `{"type":"object","patternProperties":{"^x_":{"type":"string"}},"additionalProperties":false}`,
		new:   `{"type":"object","additionalProperties":false}`,
		rules: []string{"ADDITIONAL_PROPERTIES_NARROWED"}, paths: []string{"/additionalProperties"}, oldPaths: []string{"/patternProperties/^x_"}},
	{name: "patternProperties schema changed", old: `{"type":"object","patternProperties":{"^x_":{"type":"string"}}}`, new: `{"type":"object","patternProperties":{"^x_":{"type":"integer"}}}`,
		rules: []string{"TYPE_CHANGED"}, paths: []string{"/patternProperties/^x_/type"}},

	// ---- objects: additionalProperties -------------------------------------
	{name: "additionalProperties true to false", old: `{"type":"object","properties":{"a":{}}}`, new: `{"type":"object","properties":{"a":{}},"additionalProperties":false}`,
		rules: []string{"ADDITIONAL_PROPERTIES_REMOVED"}, paths: []string{"/additionalProperties"}},
	{name: "additionalProperties false to true", old: `{"type":"object","additionalProperties":false}`, new: `{"type":"object","additionalProperties":true}`},
	{name: "additionalProperties open to schema", old: `{"type":"object"}`, new: `{"type":"object","additionalProperties":{"type":"string"}}`,
		rules: []string{"ADDITIONAL_PROPERTIES_NARROWED"}},
	{name: "additionalProperties schema to open", old: `{"type":"object","additionalProperties":{"type":"string"}}`, new: `{"type":"object"}`},
	{name: "additionalProperties schema narrowed", old: `{"type":"object","additionalProperties":{"type":["string","integer"]}}`, new: `{"type":"object","additionalProperties":{"type":"string"}}`,
		rules: []string{"TYPE_NARROWED"}, paths: []string{"/additionalProperties/type"}},

	// ---- objects: required and counts --------------------------------------
	{name: "required added", old: `{"type":"object","properties":{"id":{"type":"integer"},"email":{"type":"string"}},"required":["id"]}`,
		new:   `{"type":"object","properties":{"id":{"type":"integer"},"email":{"type":"string"}},"required":["id","email"]}`,
		rules: []string{"REQUIRED_ATTRIBUTE_ADDED"}, paths: []string{"/required/1"}, oldPaths: []string{"/required"}, contains: `property "email": now required`},
	{name: "required with default added", old: `{"type":"object","properties":{"n":{"type":"integer"}}}`,
		new: `{"type":"object","properties":{"n":{"type":"integer","default":1}},"required":["n"]}`},
	{name: "required with default added to a property named like a combinator", old: `{"type":"object","properties":{"anyOf":{"type":"object","properties":{"n":{"type":"integer"}}}}}`,
		new: `{"type":"object","properties":{"anyOf":{"type":"object","properties":{"n":{"type":"integer","default":1}},"required":["n"]}}}`},
	{name: "required with default added under oneOf", old: `{"oneOf":[{"type":"object","properties":{"n":{"type":"integer"}}}]}`,
		new:      `{"oneOf":[{"type":"object","properties":{"n":{"type":"integer","default":1}},"required":["n"]}]}`,
		rules:    []string{"REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED"},
		contains: "its default is not filled in under oneOf"},
	{name: "required removed", old: `{"type":"object","properties":{"id":{}},"required":["id"]}`, new: `{"type":"object","properties":{"id":{}}}`},
	{name: "minProperties added and maxProperties decreased", old: `{"type":"object","maxProperties":5}`, new: `{"type":"object","minProperties":1,"maxProperties":3}`,
		rules: []string{"MAX_PROPERTIES_DECREASED", "MIN_PROPERTIES_ADDED"}, paths: []string{"/maxProperties", "/minProperties"}},
	{name: "minProperties increased and maxProperties added", old: `{"type":"object","minProperties":1}`, new: `{"type":"object","minProperties":2,"maxProperties":9}`,
		rules: []string{"MAX_PROPERTIES_ADDED", "MIN_PROPERTIES_INCREASED"}},
	{name: "property counts relaxed", old: `{"type":"object","minProperties":2,"maxProperties":3}`, new: `{"type":"object","minProperties":1}`},

	// ---- nesting -----------------------------------------------------------
	{name: "nested object property", old: `{"type":"object","properties":{"address":{"type":"object","properties":{"zip":{"type":"string"}}}}}`,
		new:   `{"type":"object","properties":{"address":{"type":"object","properties":{"zip":{"type":"string","pattern":"^[0-9]{5}$"}}}}}`,
		rules: []string{"PATTERN_ADDED"}, paths: []string{"/properties/address/properties/zip/pattern"}, contains: `property "address.zip": pattern`},
	{name: "object inside array", old: `{"type":"object","properties":{"tags":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string","maxLength":50}},"additionalProperties":false}}}}`,
		new:      `{"type":"object","properties":{"tags":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string","maxLength":20},"color":{"type":"string"}},"required":["color"],"additionalProperties":false}}}}`,
		rules:    []string{"MAX_LENGTH_DECREASED", "REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL"},
		paths:    []string{"/properties/tags/items/properties/color", "/properties/tags/items/properties/name/maxLength"},
		contains: `property "tags[].color"`},
	{name: "object inside array compatible", old: `{"type":"array","items":{"type":"object","properties":{"id":{"type":"integer"}},"additionalProperties":false}}`,
		new: `{"type":"array","items":{"type":"object","properties":{"id":{"type":"number"},"note":{"type":"string"}},"additionalProperties":false}}`},

	// ---- arrays ------------------------------------------------------------
	{name: "items narrowed", old: `{"type":"array","items":{"type":["string","integer"]}}`, new: `{"type":"array","items":{"type":"string"}}`,
		rules: []string{"TYPE_NARROWED"}, paths: []string{"/items/type"}},
	{name: "items added", old: `{"type":"array"}`, new: `{"type":"array","items":{"type":"string"}}`, rules: []string{"TYPE_NARROWED"}, paths: []string{"/items/type"}},
	{name: "items removed", old: `{"type":"array","items":{"type":"string"}}`, new: `{"type":"array"}`},
	{name: "minItems added and maxItems decreased", old: `{"type":"array","maxItems":10}`, new: `{"type":"array","minItems":1,"maxItems":5}`,
		rules: []string{"MAX_ITEMS_DECREASED", "MIN_ITEMS_ADDED"}},
	{name: "minItems increased and maxItems added", old: `{"type":"array","minItems":1}`, new: `{"type":"array","minItems":2,"maxItems":5}`,
		rules: []string{"MAX_ITEMS_ADDED", "MIN_ITEMS_INCREASED"}},
	{name: "item counts relaxed", old: `{"type":"array","minItems":2,"maxItems":5}`, new: `{"type":"array","minItems":1}`},
	{name: "uniqueItems added", old: `{"type":"array"}`, new: `{"type":"array","uniqueItems":true}`, rules: []string{"UNIQUE_ITEMS_ADDED"}, paths: []string{"/uniqueItems"}},
	{name: "uniqueItems removed", old: `{"type":"array","uniqueItems":true}`, new: `{"type":"array"}`},
	{name: "uniqueItems added to single-item arrays", old: `{"type":"array","maxItems":1}`, new: `{"type":"array","maxItems":1,"uniqueItems":true}`},

	// ---- $ref --------------------------------------------------------------
	{name: "$defs reference changed", old: `{"type":"object","properties":{"billing":{"$ref":"#/$defs/address"}},"$defs":{"address":{"type":"object","properties":{"street":{"type":"string","maxLength":200}}}}}`,
		new:   `{"type":"object","properties":{"billing":{"$ref":"#/$defs/address"}},"$defs":{"address":{"type":"object","properties":{"street":{"type":"string","maxLength":100}}}}}`,
		rules: []string{"MAX_LENGTH_DECREASED"}, paths: []string{"/$defs/address/properties/street/maxLength"}, contains: `property "billing.street"`},
	{name: "definitions reference (draft-07) compatible", old: `{"definitions":{"id":{"type":"integer"}},"type":"object","properties":{"id":{"$ref":"#/definitions/id"}}}`,
		new: `{"definitions":{"id":{"type":"number"}},"type":"object","properties":{"id":{"$ref":"#/definitions/id"}}}`},
	{name: "inline schema moved to $defs", old: `{"type":"object","properties":{"a":{"type":"string","maxLength":5}}}`,
		new: `{"type":"object","properties":{"a":{"$ref":"#/$defs/s"}},"$defs":{"s":{"type":"string","maxLength":9}}}`},
	{name: "$ref replaced by narrower inline schema", old: `{"type":"object","properties":{"a":{"$ref":"#/$defs/s"}},"$defs":{"s":{"type":["string","null"]}}}`,
		new: `{"type":"object","properties":{"a":{"type":"string"}}}`, rules: []string{"TYPE_NARROWED"}, paths: []string{"/properties/a/type"}, oldPaths: []string{"/$defs/s/type"}},
	{name: "each schema resolves against its own root", old: `{"$ref":"#/$defs/x","$defs":{"x":{"type":"string"}}}`, new: `{"$ref":"#/$defs/x","$defs":{"x":{"type":"integer"}}}`,
		rules: []string{"TYPE_CHANGED"}, paths: []string{"/$defs/x/type"}},
	{name: "recursive schema compatible change (cycle)", old: `{"$defs":{"node":{"type":"object","properties":{"name":{"type":"string","maxLength":10},"children":{"type":"array","items":{"$ref":"#/$defs/node"}}}}},"$ref":"#/$defs/node"}`,
		new: `{"$defs":{"node":{"type":"object","properties":{"name":{"type":"string","maxLength":20},"children":{"type":"array","items":{"$ref":"#/$defs/node"}}}}},"$ref":"#/$defs/node"}`},
	{name: "recursive schema incompatible change (cycle)", old: `{"$defs":{"node":{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#/$defs/node"}}}}},"$ref":"#/$defs/node"}`,
		new:   `{"$defs":{"node":{"type":"object","properties":{"name":{"type":"string","minLength":1},"children":{"type":"array","items":{"$ref":"#/$defs/node"}}}}},"$ref":"#/$defs/node"}`,
		rules: []string{"MIN_LENGTH_ADDED"}, paths: []string{"/$defs/node/properties/name/minLength"}},
	{name: "root self reference (cycle)", old: `{"type":"object","properties":{"next":{"$ref":"#"},"v":{"type":"integer"}}}`, new: `{"type":"object","properties":{"next":{"$ref":"#"},"v":{"type":"number"}}}`},
	{name: "mutual recursion (cycle)", old: `{"$defs":{"a":{"type":"object","properties":{"b":{"$ref":"#/$defs/b"}}},"b":{"type":"object","properties":{"a":{"$ref":"#/$defs/a"},"x":{"type":"string"}}}},"$ref":"#/$defs/a"}`,
		new:   `{"$defs":{"a":{"type":"object","properties":{"b":{"$ref":"#/$defs/b"}}},"b":{"type":"object","properties":{"a":{"$ref":"#/$defs/a"},"x":{"type":"string","format":"uuid"}}}},"$ref":"#/$defs/a"}`,
		rules: []string{"FORMAT_ADDED"}, paths: []string{"/$defs/b/properties/x/format"}},
	{name: "recursion against a differently shaped recursion", old: `{"$defs":{"l":{"type":"object","properties":{"tail":{"$ref":"#/$defs/l"}}}},"$ref":"#/$defs/l"}`,
		new: `{"type":"object","properties":{"tail":{"$ref":"#"}}}`},
	{name: "identical remote $ref", old: `{"$ref":"https://example.com/a.json"}`, new: `{"$ref":"https://example.com/a.json","description":"same"}`},
	{name: "remote $ref changed", old: `{"$ref":"https://example.com/a.json"}`, new: `{"$ref":"https://example.com/b.json"}`, rules: []string{"UNSUPPORTED_KEYWORD"}},
	{name: "unresolvable $ref", old: `{"type":"string"}`, new: `{"$ref":"#/$defs/missing"}`, rules: []string{"UNSUPPORTED_KEYWORD"}, paths: []string{""}},
	{name: "$ref with sibling keywords", old: `{"$defs":{"s":{"type":"string"}},"$ref":"#/$defs/s"}`, new: `{"$defs":{"s":{"type":"string"}},"$ref":"#/$defs/s","maxLength":3}`,
		rules: []string{"MAX_LENGTH_ADDED"}, paths: []string{"/maxLength"}},

	// ---- allOf / anyOf / oneOf ---------------------------------------------
	{name: "anyOf branch added (SUM_TYPE_EXTENDED)", old: `{"anyOf":[{"type":"string"},{"type":"integer"}]}`, new: `{"anyOf":[{"type":"string"},{"type":"integer"},{"type":"null"}]}`},
	{name: "anyOf branch removed", old: `{"anyOf":[{"type":"string"},{"type":"integer"}]}`, new: `{"anyOf":[{"type":"string"}]}`,
		rules: []string{"SUM_TYPE_NARROWED"}, paths: []string{"/anyOf"}, oldPaths: []string{"/anyOf/1"}},
	{name: "anyOf branch modified in place", old: `{"anyOf":[{"type":"string","maxLength":10},{"type":"integer"}]}`, new: `{"anyOf":[{"type":"string","maxLength":5},{"type":"integer"}]}`,
		rules: []string{"MAX_LENGTH_DECREASED"}, paths: []string{"/anyOf/0/maxLength"}},
	{name: "anyOf branches reordered", old: `{"anyOf":[{"type":"string"},{"type":"integer"}]}`, new: `{"anyOf":[{"type":"integer"},{"type":"string"}]}`},
	{name: "anyOf with a branch replaced", old: `{"anyOf":[{"type":"string"},{"type":"integer"}]}`, new: `{"anyOf":[{"type":"string"},{"type":"boolean"},{"type":"null"}]}`,
		rules: []string{"COMBINED_TYPE_SUBSCHEMAS_CHANGED"}},
	{name: "plain schema to anyOf containing it", old: `{"type":"string","maxLength":3}`, new: `{"anyOf":[{"type":"null"},{"type":"string"}]}`},
	{name: "plain schema to anyOf not containing it", old: `{"type":"string"}`, new: `{"anyOf":[{"type":"null"},{"type":"string","maxLength":3}]}`,
		rules: []string{"MAX_LENGTH_ADDED"}, paths: []string{"/anyOf/1/maxLength"}},
	{name: "nullable via oneOf with disjoint types", old: `{"type":"string"}`, new: `{"oneOf":[{"type":"string"},{"type":"null"}]}`},
	{name: "anyOf to type union", old: `{"anyOf":[{"type":"string"},{"type":"null"}]}`, new: `{"type":["string","null"]}`},
	{name: "type union to anyOf missing a type", old: `{"type":["string","null"]}`, new: `{"anyOf":[{"type":"string"}]}`, rules: []string{"TYPE_NARROWED"}},
	{name: "oneOf branch added, disjoint", old: `{"oneOf":[{"type":"string"},{"type":"integer"}]}`, new: `{"oneOf":[{"type":"string"},{"type":"integer"},{"type":"boolean"}]}`},
	{name: "oneOf branch added, overlapping", old: `{"oneOf":[{"type":"string"},{"type":"integer"}]}`, new: `{"oneOf":[{"type":"string"},{"type":"integer"},{"type":"string","maxLength":3}]}`,
		rules: []string{"SUM_TYPE_EXTENDED"}, paths: []string{"/oneOf/2"}},
	{name: "oneOf branch added, disjoint by discriminator", old: `{"oneOf":[{"type":"object","properties":{"kind":{"const":"a"},"x":{"type":"string"}},"required":["kind"]}]}`,
		new: `{"oneOf":[{"type":"object","properties":{"kind":{"const":"a"},"x":{"type":"string"}},"required":["kind"]},{"type":"object","properties":{"kind":{"const":"b"},"y":{"type":"integer"}},"required":["kind"]}]}`},
	{name: "oneOf to anyOf (COMBINED_TYPE_EXTENDED)", old: `{"oneOf":[{"type":"string"},{"type":"string","maxLength":2}]}`, new: `{"anyOf":[{"type":"string"},{"type":"string","maxLength":2}]}`},
	{name: "anyOf to oneOf with overlap", old: `{"anyOf":[{"type":"string"},{"type":"string","maxLength":2}]}`, new: `{"oneOf":[{"type":"string"},{"type":"string","maxLength":2}]}`,
		rules: []string{"COMBINED_TYPE_CHANGED", "COMBINED_TYPE_CHANGED"}, paths: []string{"/oneOf/0", "/oneOf/1"}},
	{name: "anyOf to oneOf with disjoint branches", old: `{"anyOf":[{"type":"string"},{"type":"integer"}]}`, new: `{"oneOf":[{"type":"string"},{"type":"integer"}]}`},
	{name: "allOf branch added", old: `{"allOf":[{"type":"object"}]}`, new: `{"allOf":[{"type":"object"},{"required":["id"]}]}`,
		rules: []string{"PRODUCT_TYPE_EXTENDED"}, paths: []string{"/allOf/1"}},
	{name: "allOf branch removed (PRODUCT_TYPE_NARROWED)", old: `{"allOf":[{"type":"object"},{"required":["id"]}]}`, new: `{"allOf":[{"type":"object"}]}`},
	{name: "allOf branch modified in place", old: `{"allOf":[{"type":"object","properties":{"n":{"type":"integer"}}},{"required":["n"]}]}`,
		new:   `{"allOf":[{"type":"object","properties":{"n":{"type":"integer","maximum":9}}},{"required":["n"]}]}`,
		rules: []string{"MAXIMUM_ADDED"}, paths: []string{"/allOf/0/properties/n/maximum"}},
	{name: "allOf flattened into one schema", old: `{"allOf":[{"type":"object","properties":{"id":{"type":"integer"}}},{"required":["id"]}]}`,
		new: `{"type":"object","properties":{"id":{"type":"number"}},"required":["id"]}`},
	{name: "schema split into allOf", old: `{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]}`,
		new: `{"allOf":[{"type":"object","properties":{"id":{"type":"integer"}}},{"required":["id"]}]}`},

	{name: "discriminated union from a plain object", old: `{"type":"object","properties":{"kind":{"const":"a"},"x":{"type":"string"}},"required":["kind"]}`,
		new: `{"oneOf":[{"type":"object","properties":{"kind":{"const":"a"},"x":{"type":"string"}},"required":["kind"]},{"type":"object","properties":{"kind":{"const":"b"}},"required":["kind"]}]}`},
	{name: "nullable $ref via anyOf", old: `{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"string"}}}`,
		new: `{"type":"object","properties":{"a":{"anyOf":[{"$ref":"#/$defs/x"},{"type":"null"}]}},"$defs":{"x":{"type":"string"}}}`},
	{name: "oneOf branch widened into another branch", old: `{"oneOf":[{"type":"string","maxLength":3},{"type":"integer"}]}`,
		new:   `{"oneOf":[{"type":["string","integer"],"maxLength":3},{"type":"integer"}]}`,
		rules: []string{"SUM_TYPE_EXTENDED"}, paths: []string{"/oneOf/0"}},
	{name: "array of arrays", old: `{"type":"array","items":{"type":"array","items":{"type":"string","maxLength":9}}}`,
		new:   `{"type":"array","items":{"type":"array","items":{"type":"string","maxLength":8}}}`,
		rules: []string{"MAX_LENGTH_DECREASED"}, paths: []string{"/items/items/maxLength"}, contains: `property "[][]"`},
	{name: "closed model reopened", old: `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`, new: `{"type":"object"}`},
	{name: "property renamed in closed model", old: `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`,
		new:   `{"type":"object","properties":{"b":{"type":"string"}},"additionalProperties":false}`,
		rules: []string{"PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL"}, paths: []string{"/properties"}, oldPaths: []string{"/properties/a"}},
	{name: "additionalProperties schema to false", old: `{"type":"object","additionalProperties":{"type":"string"}}`, new: `{"type":"object","additionalProperties":false}`,
		rules: []string{"ADDITIONAL_PROPERTIES_REMOVED"}},
	{name: "nullable enum extended", old: `{"type":["string","null"],"enum":["a",null]}`, new: `{"enum":["a","b",null]}`},

	// ---- unsupported keywords ----------------------------------------------
	{name: "not changed", old: `{"not":{"type":"string"}}`, new: `{"not":{"type":"integer"}}`, rules: []string{"UNSUPPORTED_KEYWORD"}, paths: []string{"/not"}, contains: `keyword "not"`},
	{name: "identical not with a compatible sibling change", old: `{"type":["string","integer"],"not":{"const":""},"maxLength":3}`, new: `{"type":["string","integer"],"not":{"const":""},"maxLength":4}`},
	{name: "if/then/else added", old: `{"type":"object"}`, new: `{"type":"object","if":{"required":["a"]},"then":{"required":["b"]}}`,
		rules: []string{"UNSUPPORTED_KEYWORD"}, paths: []string{"/if"}},
	{name: "dependentRequired identical", old: `{"type":"object","dependentRequired":{"a":["b"]},"properties":{"a":{},"b":{}}}`, new: `{"type":"object","dependentRequired":{"a":["b"]},"properties":{"a":{},"b":{}},"title":"t"}`},
	{name: "dependencies changed", old: `{"type":"object","dependencies":{"a":["b"]}}`, new: `{"type":"object","dependencies":{"a":["b","c"]}}`, rules: []string{"UNSUPPORTED_KEYWORD"}},
	{name: "contains added", old: `{"type":"array"}`, new: `{"type":"array","contains":{"type":"string"},"minContains":1}`, rules: []string{"UNSUPPORTED_KEYWORD"}, paths: []string{"/contains"}},
	{name: "propertyNames added", old: `{"type":"object"}`, new: `{"type":"object","propertyNames":{"maxLength":3}}`, rules: []string{"UNSUPPORTED_KEYWORD"}},
	{name: "prefixItems identical but items changed", old: `{"type":"array","prefixItems":[{"type":"string"}],"items":{"type":"integer"}}`, new: `{"type":"array","prefixItems":[{"type":"string"}],"items":{"type":"number"}}`,
		rules: []string{"UNSUPPORTED_KEYWORD"}, paths: []string{"/prefixItems"}},
	{name: "unevaluatedProperties with a sibling change", old: `{"type":"object","properties":{"a":{"type":"string"}},"unevaluatedProperties":false}`,
		new: `{"type":"object","properties":{"a":{"type":"string"},"b":{}},"unevaluatedProperties":false}`, rules: []string{"UNSUPPORTED_KEYWORD"}},
	{name: "tuple items changed", old: `{"type":"array","items":[{"type":"string"}]}`, new: `{"type":"array","items":[{"type":"string","maxLength":1}],"maxItems":3}`,
		rules: []string{"MAX_ITEMS_ADDED", "UNSUPPORTED_KEYWORD"}},
	{name: "tuple items identical", old: `{"type":"array","items":[{"type":"string"}]}`, new: `{"type":"array","items":[{"type":"string"}],"maxItems":3}`,
		rules: []string{"MAX_ITEMS_ADDED"}},
	{name: "unknown keyword added", old: `{"type":"string"}`, new: `{"type":"string","x-go-type":"Email"}`, rules: []string{"UNSUPPORTED_KEYWORD"}, paths: []string{"/x-go-type"}},
	{name: "nested $id", old: `{"type":"object","properties":{"a":{"$id":"a.json","type":"string"}}}`, new: `{"type":"object","properties":{"a":{"$id":"a.json","type":["string","null"]}}}`,
		rules: []string{"UNSUPPORTED_KEYWORD"}, paths: []string{"/properties/a/$id"}},
	{name: "unsupported keyword only in a removed property of an open model", old: `{"type":"object","properties":{"a":{"not":{"type":"null"}}}}`, new: `{"type":"object"}`},
	{name: "identical unknown keyword", old: `{"type":"string","x-go-type":"Email","maxLength":5}`, new: `{"type":"string","x-go-type":"Email","maxLength":6}`},
	{name: "unsupported keyword dropped for an unconstrained schema", old: `{"not":{"type":"null"}}`, new: `{}`},
	{name: "malformed keyword value", old: `{"type":"string"}`, new: `{"type":"string","maxLength":"ten"}`, rules: []string{"UNSUPPORTED_KEYWORD"}},
}

// decode parses JSON as encoding/json does by default (float64 numbers) or
// with UseNumber (json.Number), the two forms Check accepts.
func decode(t testing.TB, s string, useNumber bool) any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	if useNumber {
		d.UseNumber()
	}
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("bad JSON %s: %v", s, err)
	}
	return v
}

func rulesOf(f []Finding) []string {
	var r []string
	for _, x := range f {
		r = append(r, x.Rule)
	}
	return r
}

func TestCheck(t *testing.T) {
	if len(cases) < 70 {
		t.Fatalf("want at least 70 schema pairs, have %d", len(cases))
	}
	names := map[string]bool{}
	for _, tc := range cases {
		if names[tc.name] {
			t.Fatalf("duplicate case name %q", tc.name)
		}
		names[tc.name] = true
		for _, useNumber := range []bool{false, true} {
			tc := tc
			sub := tc.name
			if useNumber {
				sub += "/json.Number"
			}
			t.Run(sub, func(t *testing.T) {
				old, nw := decode(t, tc.old, useNumber), decode(t, tc.new, useNumber)
				got := Check(old, nw)
				gotRules := rulesOf(got)
				want := append([]string(nil), tc.rules...)
				sortedGot := append([]string(nil), gotRules...)
				sort.Strings(sortedGot)
				sort.Strings(want)
				if !reflect.DeepEqual(sortedGot, want) && !(len(sortedGot) == 0 && len(want) == 0) {
					t.Fatalf("rules = %v, want %v\nfindings:\n%s", gotRules, tc.rules, dump(got))
				}
				if Compatible(old, nw) != (len(tc.rules) == 0) {
					t.Errorf("Compatible disagrees with Check")
				}
				if tc.paths != nil {
					var paths []string
					for _, f := range got {
						paths = append(paths, f.Path)
					}
					if !reflect.DeepEqual(paths, tc.paths) {
						t.Errorf("paths = %q, want %q\nfindings:\n%s", paths, tc.paths, dump(got))
					}
				}
				if tc.oldPaths != nil {
					var paths []string
					for _, f := range got {
						paths = append(paths, f.OldPath)
					}
					if !reflect.DeepEqual(paths, tc.oldPaths) {
						t.Errorf("old paths = %q, want %q\nfindings:\n%s", paths, tc.oldPaths, dump(got))
					}
				}
				if tc.contains != "" && (len(got) == 0 || !strings.Contains(got[0].Message, tc.contains)) {
					t.Errorf("first message does not contain %q\nfindings:\n%s", tc.contains, dump(got))
				}
				for _, f := range got {
					if f.Rule == "" || f.Message == "" {
						t.Errorf("incomplete finding %+v", f)
					}
					if f.Path != "" && !strings.HasPrefix(f.Path, "/") {
						t.Errorf("Path %q is not a JSON pointer", f.Path)
					}
				}
				// Every schema is compatible with itself.
				if self := Check(old, decode(t, tc.old, useNumber)); len(self) != 0 {
					t.Errorf("Check(old, old) = %s", dump(self))
				}
				if self := Check(nw, nw); len(self) != 0 {
					t.Errorf("Check(new, new) = %s", dump(self))
				}
			})
		}
	}
}

// TestRulesCovered makes sure the table exercises every reported rule id.
func TestRulesCovered(t *testing.T) {
	all := []string{
		RuleTypeNarrowed, RuleTypeChanged, RuleMaxLengthAdded, RuleMaxLengthDecreased, RuleMinLengthAdded,
		RuleMinLengthIncreased, RulePatternAdded, RulePatternChanged, RuleFormatAdded, RuleFormatChanged,
		RuleMaximumAdded, RuleMaximumDecreased, RuleMinimumAdded, RuleMinimumIncreased, RuleExclusiveMaximumAdded,
		RuleExclusiveMaximumDecreased, RuleExclusiveMinimumAdded, RuleExclusiveMinimumIncreased, RuleMultipleOfAdded,
		RuleMultipleOfExpanded, RuleMultipleOfChanged, RuleEnumArrayNarrowed, RuleEnumArrayChanged,
		RuleRequiredAttributeAdded, RuleRequiredAttributeWithDefaultAdded, RuleMaxPropertiesAdded,
		RuleMaxPropertiesDecreased, RuleMinPropertiesAdded, RuleMinPropertiesIncreased, RuleAdditionalPropertiesRemoved,
		RuleAdditionalPropertiesNarrowed, RuleRequiredPropertyAddedToOpenContentModel,
		RuleRequiredPropertyWithDefaultAddedToOpenContentModel, RuleOptionalPropertyAddedToOpenContentModel,
		RuleRequiredPropertyAddedToUnopenContentModel, RuleRequiredPropertyWithDefaultAddedToUnopenContentModel,
		RulePropertyRemovedFromClosedContentModel, RulePropertyRemovedNotCoveredByPartiallyOpenContentModel,
		RulePropertyAddedNotCoveredByPartiallyOpenContentModel, RuleMaxItemsAdded, RuleMaxItemsDecreased,
		RuleMinItemsAdded, RuleMinItemsIncreased, RuleUniqueItemsAdded, RuleCombinedTypeChanged,
		RuleProductTypeExtended, RuleSumTypeExtended, RuleSumTypeNarrowed, RuleCombinedTypeSubschemasChanged,
		RuleUnsupportedKeyword,
	}
	seen := map[string]bool{}
	for _, tc := range cases {
		for _, r := range tc.rules {
			seen[r] = true
		}
	}
	for _, r := range all {
		if !seen[r] {
			t.Errorf("no test case reports %s", r)
		}
	}
}

func TestDeterministic(t *testing.T) {
	old := `{"type":"object","properties":{` +
		`"a":{"type":"string","maxLength":9},"b":{"type":"integer"},"c":{"type":"array","items":{"type":"string"}},` +
		`"d":{"enum":["x","y"]},"e":{"type":"object","properties":{"f":{"type":"number"}}}},` +
		`"required":["a"],"additionalProperties":false}`
	nw := `{"type":"object","properties":{` +
		`"a":{"type":"string","maxLength":3,"pattern":"^a"},"b":{"type":"string"},"c":{"type":"array","items":{"type":"integer"},"uniqueItems":true},` +
		`"d":{"enum":["x"]},"e":{"type":"object","properties":{"f":{"type":"integer"}}},"g":{"type":"string"}},` +
		`"required":["a","b","g"],"additionalProperties":false,"not":{}}`
	first := Check(decode(t, old, false), decode(t, nw, false))
	if len(first) < 8 {
		t.Fatalf("expected many findings, got %s", dump(first))
	}
	if !sort.SliceIsSorted(first, func(i, j int) bool {
		if first[i].Path != first[j].Path {
			return first[i].Path < first[j].Path
		}
		return first[i].Rule < first[j].Rule
	}) {
		t.Fatalf("findings not sorted by Path, Rule:\n%s", dump(first))
	}
	for i := 0; i < 50; i++ {
		useNumber := i%2 == 1
		again := Check(decode(t, old, useNumber), decode(t, nw, useNumber))
		if !reflect.DeepEqual(first, again) {
			t.Fatalf("run %d differs:\n%s\nvs\n%s", i, dump(first), dump(again))
		}
	}
}

// TestHandBuiltSchemas accepts schemas built in Go rather than decoded.
func TestHandBuiltSchemas(t *testing.T) {
	old := map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer", "maximum": 10}}}
	nw := map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer", "maximum": json.Number("5")}}}
	got := Check(old, nw)
	if len(got) != 1 || got[0].Rule != RuleMaximumDecreased || got[0].Path != "/properties/n/maximum" {
		t.Fatalf("got %s", dump(got))
	}
	if !Compatible(nw, old) {
		t.Fatalf("raising a maximum must be compatible: %s", dump(Check(nw, old)))
	}
}

// TestHugeNumbers keeps exact arithmetic away from absurd exponents.
func TestHugeNumbers(t *testing.T) {
	s := `{"type":"number","maximum":1e999999999,"enum":[1e999999999]}`
	if got := Check(decode(t, s, true), decode(t, s, true)); len(got) != 0 {
		t.Fatalf("got %s", dump(got))
	}
	other := `{"type":"number","maximum":1e999999998}`
	if got := Check(decode(t, s, true), decode(t, other, true)); len(got) == 0 {
		t.Fatalf("an uncomparable maximum must fail closed")
	}
}

// TestEscapedPointers checks JSON-pointer escaping of property names.
func TestEscapedPointers(t *testing.T) {
	old := `{"type":"object","properties":{"a/b~c":{"type":"string"}},"$defs":{"x/y":{"type":"object"}},"$ref":"#/$defs/x~1y"}`
	nw := `{"type":"object","properties":{"a/b~c":{"type":"integer"}},"$defs":{"x/y":{"type":"object"}},"$ref":"#/$defs/x~1y"}`
	got := Check(decode(t, old, false), decode(t, nw, false))
	if len(got) != 1 || got[0].Path != "/properties/a~1b~0c/type" {
		t.Fatalf("got %s", dump(got))
	}
}

func dump(f []Finding) string {
	var b bytes.Buffer
	for _, x := range f {
		b.WriteString("  " + x.Rule + " path=" + quote(x.Path) + " old=" + quote(x.OldPath) + " " + x.Message + "\n")
	}
	return b.String()
}

func quote(s string) string { return `"` + s + `"` }
