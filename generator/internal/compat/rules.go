package compat

import "github.com/jobc-dev/jobc/internal/dialect"

// Rule ids. Each is the name of a Confluent Schema Registry JSON Schema
// Difference.Type (io.confluent.kafka.schemaregistry.json.diff.Difference),
// except FORMAT_ADDED, FORMAT_CHANGED and UNSUPPORTED_KEYWORD, which jobc
// adds in the same naming style. Only the incompatible ones are ever reported:
// the compatible counterparts (MAX_LENGTH_INCREASED, REQUIRED_ATTRIBUTE_REMOVED,
// ENUM_ARRAY_EXTENDED, TYPE_EXTENDED, ...) are recognised but yield no Finding.
const (
	// General.
	RuleTypeNarrowed = "TYPE_NARROWED" // the new type set lost some old types, gained none
	RuleTypeChanged  = "TYPE_CHANGED"  // the new type set lost old types (and gained others), or the new schema is false

	// Strings.
	RuleMaxLengthAdded     = "MAX_LENGTH_ADDED"
	RuleMaxLengthDecreased = "MAX_LENGTH_DECREASED"
	RuleMinLengthAdded     = "MIN_LENGTH_ADDED"
	RuleMinLengthIncreased = "MIN_LENGTH_INCREASED"
	RulePatternAdded       = "PATTERN_ADDED"
	RulePatternChanged     = "PATTERN_CHANGED"
	RuleFormatAdded        = "FORMAT_ADDED"   // jobc extension: Confluent does not compare format
	RuleFormatChanged      = "FORMAT_CHANGED" // jobc extension: Confluent does not compare format

	// Numbers.
	RuleMaximumAdded              = "MAXIMUM_ADDED"
	RuleMaximumDecreased          = "MAXIMUM_DECREASED"
	RuleMinimumAdded              = "MINIMUM_ADDED"
	RuleMinimumIncreased          = "MINIMUM_INCREASED"
	RuleExclusiveMaximumAdded     = "EXCLUSIVE_MAXIMUM_ADDED"
	RuleExclusiveMaximumDecreased = "EXCLUSIVE_MAXIMUM_DECREASED"
	RuleExclusiveMinimumAdded     = "EXCLUSIVE_MINIMUM_ADDED"
	RuleExclusiveMinimumIncreased = "EXCLUSIVE_MINIMUM_INCREASED"
	RuleMultipleOfAdded           = "MULTIPLE_OF_ADDED"
	RuleMultipleOfExpanded        = "MULTIPLE_OF_EXPANDED"
	RuleMultipleOfChanged         = "MULTIPLE_OF_CHANGED"

	// Enumerations (enum and const).
	RuleEnumArrayNarrowed = "ENUM_ARRAY_NARROWED"
	RuleEnumArrayChanged  = "ENUM_ARRAY_CHANGED"

	// Objects.
	RuleRequiredAttributeAdded                               = "REQUIRED_ATTRIBUTE_ADDED"
	RuleRequiredAttributeWithDefaultAdded                    = "REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED"
	RuleMaxPropertiesAdded                                   = "MAX_PROPERTIES_ADDED"
	RuleMaxPropertiesDecreased                               = "MAX_PROPERTIES_DECREASED"
	RuleMinPropertiesAdded                                   = "MIN_PROPERTIES_ADDED"
	RuleMinPropertiesIncreased                               = "MIN_PROPERTIES_INCREASED"
	RuleAdditionalPropertiesRemoved                          = "ADDITIONAL_PROPERTIES_REMOVED"
	RuleAdditionalPropertiesNarrowed                         = "ADDITIONAL_PROPERTIES_NARROWED"
	RuleRequiredPropertyAddedToOpenContentModel              = "REQUIRED_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL"
	RuleRequiredPropertyWithDefaultAddedToOpenContentModel   = "REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_OPEN_CONTENT_MODEL"
	RuleOptionalPropertyAddedToOpenContentModel              = "OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL"
	RuleRequiredPropertyAddedToUnopenContentModel            = "REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL"
	RuleRequiredPropertyWithDefaultAddedToUnopenContentModel = "REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL"
	RulePropertyRemovedFromClosedContentModel                = "PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL"
	RulePropertyRemovedNotCoveredByPartiallyOpenContentModel = "PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
	RulePropertyAddedNotCoveredByPartiallyOpenContentModel   = "PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"

	// Arrays.
	RuleMaxItemsAdded     = "MAX_ITEMS_ADDED"
	RuleMaxItemsDecreased = "MAX_ITEMS_DECREASED"
	RuleMinItemsAdded     = "MIN_ITEMS_ADDED"
	RuleMinItemsIncreased = "MIN_ITEMS_INCREASED"
	RuleUniqueItemsAdded  = "UNIQUE_ITEMS_ADDED"

	// Combined schemas (allOf = product type, anyOf/oneOf = sum type).
	RuleCombinedTypeChanged           = "COMBINED_TYPE_CHANGED"
	RuleProductTypeExtended           = "PRODUCT_TYPE_EXTENDED"
	RuleSumTypeExtended               = "SUM_TYPE_EXTENDED"
	RuleSumTypeNarrowed               = "SUM_TYPE_NARROWED"
	RuleCombinedTypeSubschemasChanged = "COMBINED_TYPE_SUBSCHEMAS_CHANGED"

	// Fail-closed: a keyword (or a $ref, or a value) the checker cannot reason about.
	RuleUnsupportedKeyword = "UNSUPPORTED_KEYWORD"
)

// isConstraint reports whether keyword k (in a schema object located at ptr)
// can affect validation, i.e. is neither an annotation nor a container. A word the
// dialect does not know is a constraint the checker cannot reason about: fail closed.
func isConstraint(k, ptr string) bool {
	row, ok := dialect.Lookup(k)
	return !ok || row.Constrains(ptr)
}

// supported reports whether the checker has rules for keyword k; any other
// difference between versions is reported as UNSUPPORTED_KEYWORD.
func supported(k string) bool {
	row, ok := dialect.Lookup(k)
	return ok && row.Supports(dialect.Compat)
}

// valueForm is the form of keyword k's value: whether it holds a subschema, a map of
// them or a list of them (dialect.AnyValue for a word the dialect does not know).
func valueForm(k string) dialect.Value {
	row, _ := dialect.Lookup(k)
	return row.Value
}

// isSchemaValue reports whether v has the shape of a JSON Schema (object or boolean).
func isSchemaValue(v any) bool {
	switch v.(type) {
	case bool, map[string]any:
		return true
	}
	return false
}

// wellFormed reports whether the value of supported keyword k has the shape
// the specification requires. Malformed values are reported as
// UNSUPPORTED_KEYWORD (when they differ) and otherwise ignored.
func wellFormed(k string, v any) bool {
	switch k {
	case "type":
		switch t := v.(type) {
		case string:
			return knownType(t)
		case []any:
			if len(t) == 0 {
				return false
			}
			for _, e := range t {
				s, ok := e.(string)
				if !ok || !knownType(s) {
					return false
				}
			}
			return true
		}
		return false
	case "enum":
		_, ok := v.([]any)
		return ok
	case "const":
		return true
	case "minLength", "maxLength", "minProperties", "maxProperties", "minItems", "maxItems":
		_, ok := nonNegInt(v)
		return ok
	case "pattern", "format", "$ref":
		_, ok := v.(string)
		return ok
	case "minimum", "maximum":
		return isNumber(v)
	case "exclusiveMinimum", "exclusiveMaximum":
		_, isBool := v.(bool)
		return isBool || isNumber(v)
	case "multipleOf":
		r, ok := toRat(v)
		return ok && r.Sign() > 0
	case "uniqueItems":
		_, ok := v.(bool)
		return ok
	case "required":
		arr, ok := v.([]any)
		if !ok {
			return false
		}
		for _, e := range arr {
			if _, ok := e.(string); !ok {
				return false
			}
		}
		return true
	case "properties", "patternProperties":
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		for _, s := range m {
			if !isSchemaValue(s) {
				return false
			}
		}
		return true
	case "additionalProperties", "items":
		return isSchemaValue(v)
	case "allOf", "anyOf", "oneOf":
		arr, ok := v.([]any)
		if !ok || len(arr) == 0 {
			return false
		}
		for _, s := range arr {
			if !isSchemaValue(s) {
				return false
			}
		}
		return true
	}
	return true
}

func knownType(t string) bool {
	switch t {
	case "null", "boolean", "object", "array", "number", "integer", "string":
		return true
	}
	return false
}
