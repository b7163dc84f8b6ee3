package dialect

// Format is one format a target checks. A format not in the table is an annotation
// for every target, as JSON Schema's format-annotation vocabulary has it: jobc
// generate accepts it, and neither the runtime nor a SQL producer checks it.
type Format struct {
	Name string
	// Check is the runtime's check (format.go): nil when v is valid; a value that is
	// not a string passes, since type says what it must be.
	Check func(v any) error
	// SQL is the function of the SQL function library (schema/library) that checks the format as
	// Check does, returning Check's reason or NULL; "" when there is none, and SQL
	// producers refuse the format rather than accept payloads Go rejects: regex is
	// Go's regexp, uri-template reads the raw path net/url keeps.
	SQL string
	// Describe says what the format means, for TypeScript's doc comments; "" when the
	// name says enough.
	Describe string
	// Examples are valid values, the first a typical one: sample documents use them,
	// since no walk of a pattern finds a valid semver or duration.
	Examples []string
}

// formats is the table, in the order messages list the formats in.
var formats = []Format{
	{Name: "date", Check: validateDate, SQL: "jobc_format_date",
		Describe: "an RFC 3339 full date, such as 2024-05-31", Examples: []string{"2026-01-02", "2024-02-29"}},
	{Name: "date-time", Check: validateDateTime, SQL: "jobc_format_date_time",
		Describe: "an RFC 3339 date and time, as Date.prototype.toISOString() writes",
		Examples: []string{"2026-01-02T03:04:05Z", "2026-12-31T23:59:59.999+01:00"}},
	{Name: "duration", Check: validateDuration, SQL: "jobc_format_duration",
		Describe: "an ISO 8601 duration, such as P1DT2H", Examples: []string{"P1DT2H"}},
	{Name: "email", Check: validateEmail, SQL: "jobc_format_email",
		Describe: "an email address", Examples: []string{"ada@example.com"}},
	{Name: "hostname", Check: validateHostname, SQL: "jobc_format_hostname",
		Describe: "a host name", Examples: []string{"example.com"}},
	// Go checks an IRI as a URI, and so does SQL.
	{Name: "iri", Check: validateURI, SQL: "jobc_format_uri", Examples: []string{"https://example.com/a?b=c"}},
	{Name: "iri-reference", Check: validateURIReference, SQL: "jobc_format_uri_reference", Examples: []string{"../a?b=c"}},
	{Name: "ipv4", Check: validateIPV4, SQL: "jobc_format_ipv4",
		Describe: "an IPv4 address", Examples: []string{"192.0.2.1"}},
	{Name: "ipv6", Check: validateIPV6, SQL: "jobc_format_ipv6",
		Describe: "an IPv6 address", Examples: []string{"2001:db8::1"}},
	{Name: "json-pointer", Check: validateJSONPointer, SQL: "jobc_format_json_pointer", Examples: []string{"/a/0"}},
	{Name: "period", Check: validatePeriod, SQL: "jobc_format_period", Examples: []string{"2026-01-02T03:04:05Z/P1D"}},
	{Name: "relative-json-pointer", Check: validateRelativeJSONPointer, SQL: "jobc_format_relative_json_pointer", Examples: []string{"1/a"}},
	{Name: "semver", Check: validateSemver, SQL: "jobc_format_semver", Examples: []string{"1.2.3"}},
	{Name: "time", Check: validateTime, SQL: "jobc_format_time",
		Describe: "an RFC 3339 time, such as 23:59:59Z", Examples: []string{"03:04:05Z"}},
	{Name: "uri", Check: validateURI, SQL: "jobc_format_uri",
		Describe: "an absolute URI", Examples: []string{"https://example.com/a?b=c"}},
	{Name: "uri-reference", Check: validateURIReference, SQL: "jobc_format_uri_reference", Examples: []string{"../a?b=c"}},
	{Name: "uuid", Check: validateUUID, SQL: "jobc_format_uuid",
		Describe: "a UUID", Examples: []string{"0b9e3f4e-8d2c-4f5a-9b1e-2c3d4e5f6a7b"}},
	{Name: "uri-template", Check: validateURITemplate, Examples: []string{"https://example.com/{id}"}},
	{Name: "regex", Check: validateRegex, Examples: []string{"^[a-z]+$"}},
}

// formatIndex indexes formats; built once from the table, never written after.
var formatIndex = func() map[string]int {
	m := make(map[string]int, len(formats))
	for i, f := range formats {
		m[f.Name] = i
	}
	return m
}()

// LookupFormat returns the row of format name; ok is false for a format no target
// checks (an annotation).
func LookupFormat(name string) (f Format, ok bool) {
	i, ok := formatIndex[name]
	if !ok {
		return Format{}, false
	}
	return formats[i], true
}

// Formats returns the names of the formats target t checks, in the table's order.
// Go and SQL check formats; TypeScript's types and the compatibility checker only
// compare their names, so they check none.
func Formats(t Target) []string {
	var out []string
	for _, f := range formats {
		if (t == Go && f.Check != nil) || (t == SQL && f.SQL != "") {
			out = append(out, f.Name)
		}
	}
	return out
}

// CheckFormat checks the string s against format name as the runtime does; nil when
// s is valid or the format is an annotation.
func CheckFormat(name, s string) error {
	f, ok := LookupFormat(name)
	if !ok || f.Check == nil {
		return nil
	}
	return f.Check(s)
}
