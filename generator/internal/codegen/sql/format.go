package sql

// formats maps each format the Go runtime checks to the function of jobc's SQL
// function library (schema/library/4_formats.sql) that checks it the same way, returning Go's reason or NULL.
// A format the runtime checks and SQL does not (regex, which is Go's regexp;
// uri-template, which reads the raw path net/url keeps) is refused; one the runtime
// does not check (an annotation) is not checked here either.
var formats = map[string]string{
	"uuid":                  "jobc_format_uuid",
	"date":                  "jobc_format_date",
	"time":                  "jobc_format_time",
	"date-time":             "jobc_format_date_time",
	"ipv4":                  "jobc_format_ipv4",
	"ipv6":                  "jobc_format_ipv6",
	"hostname":              "jobc_format_hostname",
	"email":                 "jobc_format_email",
	"uri":                   "jobc_format_uri",
	"iri":                   "jobc_format_uri", // Go checks an IRI as a URI
	"uri-reference":         "jobc_format_uri_reference",
	"iri-reference":         "jobc_format_uri_reference",
	"json-pointer":          "jobc_format_json_pointer",
	"relative-json-pointer": "jobc_format_relative_json_pointer",
	"duration":              "jobc_format_duration",
	"period":                "jobc_format_period",
	"semver":                "jobc_format_semver",
}

// checkedByGo are the formats runtime/internal/schema checks (its formats table).
var checkedByGo = map[string]bool{
	"json-pointer": true, "relative-json-pointer": true, "uuid": true, "duration": true,
	"period": true, "ipv4": true, "ipv6": true, "hostname": true, "email": true, "date": true,
	"time": true, "date-time": true, "uri": true, "iri": true, "uri-reference": true,
	"iri-reference": true, "uri-template": true, "semver": true, "regex": true,
}

// format returns the SQL check of format f, at the schema pointer at; ok is false
// when there is nothing to check (or it cannot be, which is reported).
func (fn *function) format(f, at string) (string, bool) {
	if sqlFn, ok := formats[f]; ok {
		return sqlFn, true
	}
	if checkedByGo[f] {
		fn.errorf(at+"/format", "format %s has no SQL check, so a SQL producer would accept payloads Go rejects; SQL producers check %s", f, supportedFormats())
	}
	return "", false
}

func supportedFormats() string {
	return "date, date-time, duration, email, hostname, iri, iri-reference, ipv4, ipv6, json-pointer, period, " +
		"relative-json-pointer, semver, time, uri, uri-reference and uuid"
}
