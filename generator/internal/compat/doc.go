// Package compat decides whether a new version of a jobc job-payload JSON
// Schema may follow the previous one without a hand-written upcast.
//
// # Direction
//
// The question is always: does the NEW schema accept every document the OLD
// schema accepted? A job enqueued under the old version may be picked up by a
// worker that validates with the new one, so the new schema must be a
// superset of the old. This is the Confluent Schema Registry's BACKWARD
// compatibility ("a reader with the new schema reads data written with the
// old one"), and the checker follows the JSON Schema rules that Confluent
// implements in io.confluent.kafka.schemaregistry.json.diff.SchemaDiff, where
// SchemaDiff.compare(previous, current) is checked against
// SchemaDiff.COMPATIBLE_CHANGES.
//
// # Rules
//
// Every Finding carries the Confluent Difference.Type name of the change, so
// it can be looked up in Confluent's documentation and source:
//
//   - type: TYPE_EXTENDED (compatible: integer→number, adding "null" or any
//     other type to "type") versus TYPE_NARROWED and TYPE_CHANGED;
//   - strings: MAX_LENGTH_*, MIN_LENGTH_*, PATTERN_* (added or changed is
//     incompatible, removed is compatible), plus FORMAT_ADDED and
//     FORMAT_CHANGED, a jobc extension in the same style;
//   - numbers: MAXIMUM_*, MINIMUM_*, EXCLUSIVE_MAXIMUM_*, EXCLUSIVE_MINIMUM_*,
//     MULTIPLE_OF_* (MULTIPLE_OF_REDUCED, e.g. 4→2, is compatible);
//   - enum and const: ENUM_ARRAY_EXTENDED (compatible), ENUM_ARRAY_NARROWED,
//     ENUM_ARRAY_CHANGED;
//   - objects and their content models: open (no additionalProperties, or
//     true), closed (additionalProperties false) and partially open
//     (additionalProperties a schema, or patternProperties):
//     PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL and
//     OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL are compatible;
//     OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL (unless the new property
//     schema accepts anything: PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL),
//     REQUIRED_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL,
//     REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL,
//     PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL (unless the old property
//     schema was false), PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL,
//     PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL,
//     ADDITIONAL_PROPERTIES_REMOVED and ADDITIONAL_PROPERTIES_NARROWED are not;
//     REQUIRED_ATTRIBUTE_ADDED versus REQUIRED_ATTRIBUTE_REMOVED;
//     MAX_PROPERTIES_* and MIN_PROPERTIES_*;
//   - arrays: "items" compared recursively, MAX_ITEMS_*, MIN_ITEMS_*,
//     UNIQUE_ITEMS_ADDED (UNIQUE_ITEMS_REMOVED is compatible);
//   - allOf (product type), anyOf and oneOf (sum types): PRODUCT_TYPE_NARROWED,
//     SUM_TYPE_EXTENDED and COMBINED_TYPE_EXTENDED (oneOf→anyOf) are
//     compatible; PRODUCT_TYPE_EXTENDED, SUM_TYPE_NARROWED,
//     COMBINED_TYPE_CHANGED and COMBINED_TYPE_SUBSCHEMAS_CHANGED are not.
//     Branches are matched pairwise: every old branch must be accepted by some
//     new branch.
//
// Only incompatible differences are reported; compatible ones produce no
// Finding.
//
// # Where jobc departs from Confluent
//
// Confluent's verdicts are already stated for this direction, but a few of
// them rely on a deserializer rather than on validation. jobc validates, so:
//
//   - REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED and
//     REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL are
//     compatible, as for Confluent, because the worker fills schema defaults
//     into an old document before it validates it as the new version
//     (runtime.fillDefaults). So "accepts every old document" here means after
//     defaults are filled in. The worker fills them through properties,
//     additionalProperties, items and $ref only: below allOf, anyOf, oneOf,
//     not, if/then/else, prefixItems, patternProperties, dependentSchemas or
//     contains, both rules stay incompatible. A required property with a
//     default added to an open content model stays incompatible too: an old
//     document may hold any value under its name.
//   - SUM_TYPE_EXTENDED on a oneOf is incompatible unless the added branch is
//     provably disjoint (by type, by enum/const, or by a required
//     discriminator property with disjoint const/enum values) from the branch
//     that accepts the old documents: a document matching two branches fails
//     oneOf. For anyOf it stays compatible.
//   - Adding a property to a partially open model is judged against the
//     schema that really applied to that name in the old schema (every
//     matching patternProperties entry, else additionalProperties, else
//     anything), not only against additionalProperties.
//
// Other refinements, all in the direction of fewer false alarms without
// losing soundness:
//
//   - numeric bounds are compared as effective bounds (minimum 5 →
//     exclusiveMinimum 4 is compatible; integer-only old schemas round their
//     bounds), multipleOf exactly on decimals (0.5 → 0.1 is compatible);
//   - when the old schema only accepts a finite list of values (enum, const,
//     "type": "boolean"/"null"), a tightened string or number constraint is
//     reported only if one of those values breaks it, and the old types are
//     those of the values;
//   - an enum or const added where the old schema accepted unboundedly many
//     values is ENUM_ARRAY_NARROWED;
//   - anyOf→oneOf is accepted when the branches are provably disjoint
//     (Confluent only accepts a singleton); an old schema that no new
//     anyOf/oneOf branch accepts is explained with the findings of the
//     closest branch rather than a bare TYPE_CHANGED; allOf conjunctions of
//     the old schema are flattened, so splitting a schema into allOf branches
//     or merging them back is compatible;
//   - "format" is treated as an assertion (FORMAT_ADDED, FORMAT_CHANGED).
//
// # References, cycles and fail-closed behaviour
//
// Local references ("#", "#/$defs/x", "#/definitions/x", any JSON pointer
// fragment) are resolved first, each schema against its own document.
// Recursive schemas are compared coinductively: a pair of subschemas met again
// while it is being compared is assumed compatible.
//
// Annotations (title, description, default, examples, $comment, deprecated,
// readOnly, writeOnly, and $schema and $id at the root) never cause a
// finding. Every other keyword the checker does not model (if/then/else, not,
// dependentSchemas, dependencies, contains, propertyNames,
// unevaluatedProperties, prefixItems, tuple "items", remote or anchor $ref,
// unknown keywords, ...) fails closed with UNSUPPORTED_KEYWORD when the two
// subschemas that hold it differ. Independent assertions (not, if/then/else,
// dependentSchemas, ...) with identical values on both sides are accepted,
// since an identical constraint is trivially compatible; keywords whose
// meaning depends on their siblings (unevaluated*, prefixItems, nested $id,
// ...) require the whole subschema to be identical.
//
// The checker is sound rather than complete: whenever it cannot prove that
// the new schema accepts an old document it reports a finding.
package compat
