package pgtest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// maxIdentLen is PostgreSQL's NAMEDATALEN-1: longer identifiers are truncated
// by the server, so names are kept within it.
const maxIdentLen = 63

// randomSuffixLen is the number of hex characters appended to generated names.
const randomSuffixLen = 8

// sanitize maps s to a string of [a-z0-9_]: ASCII letters are lower-cased,
// every run of other characters becomes a single '_', and leading/trailing '_'
// are trimmed. The result may be empty.
func sanitize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	underscore := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		default:
			c = '_'
		}
		if c == '_' {
			if underscore {
				continue
			}
			underscore = true
		} else {
			underscore = false
		}
		b.WriteByte(c)
	}
	return strings.Trim(b.String(), "_")
}

// uniqueName returns "<prefix>_<random>" where prefix is sanitized, made to
// start with a letter (fallback "x" when empty, "x_" prepended when it starts
// with a digit), and truncated so the whole name fits in maxIdentLen bytes.
// The result is a valid unquoted PostgreSQL identifier.
func uniqueName(prefix string) (string, error) {
	p := sanitize(prefix)
	switch {
	case p == "":
		p = "x"
	case p[0] >= '0' && p[0] <= '9':
		p = "x_" + p
	}
	if limit := maxIdentLen - 1 - randomSuffixLen; len(p) > limit {
		p = strings.TrimRight(p[:limit], "_")
	}
	buf := make([]byte, randomSuffixLen/2)
	if _, err := rand.Read(buf); err != nil {
		return "", fmt.Errorf("pgtest: random name: %w", err)
	}
	return p + "_" + hex.EncodeToString(buf), nil
}

// validName reports whether s is a name produced by sanitize/uniqueName, that
// is a non-empty string of at most maxIdentLen bytes of [a-z0-9_] that does
// not start with a digit. Such names never need quoting.
func validName(s string) bool {
	if s == "" || len(s) > maxIdentLen || (s[0] >= '0' && s[0] <= '9') {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// isURL reports whether connString is in URL form rather than keyword/value
// form.
func isURL(connString string) bool {
	return strings.HasPrefix(connString, "postgres://") || strings.HasPrefix(connString, "postgresql://")
}

// withDatabase returns connString pointing at database db instead. Both URL
// and keyword/value forms are supported.
func withDatabase(connString, db string) (string, error) {
	if isURL(connString) {
		u, err := url.Parse(connString)
		if err != nil {
			return "", fmt.Errorf("pgtest: parse connection URL: %w", err)
		}
		u.Path = "/" + db
		u.RawPath = ""
		q := u.Query()
		if q.Has("dbname") {
			q.Set("dbname", db)
			u.RawQuery = strings.ReplaceAll(q.Encode(), "+", "%20")
		}
		return u.String(), nil
	}
	return appendKeywordValue(connString, "dbname", db), nil
}

// withSearchPath returns connString with the session default search_path set
// to schema. It uses the libpq "options" parameter ("-c search_path=..."),
// which pgx and libpq-based tools such as psql both understand; options that
// are already present are kept.
func withSearchPath(connString, schema string) (string, error) {
	cfg, err := pgconn.ParseConfig(connString)
	if err != nil {
		return "", fmt.Errorf("pgtest: parse connection string: %w", err)
	}
	opts := "-c search_path=" + schema
	if prev := cfg.RuntimeParams["options"]; prev != "" {
		opts = prev + " " + opts
	}
	if isURL(connString) {
		u, err := url.Parse(connString)
		if err != nil {
			return "", fmt.Errorf("pgtest: parse connection URL: %w", err)
		}
		q := u.Query()
		q.Set("options", opts)
		// pgx does not decode '+' as a space in URLs; Encode escapes literal
		// '+' as %2B, so every '+' it produces stands for a space.
		u.RawQuery = strings.ReplaceAll(q.Encode(), "+", "%20")
		return u.String(), nil
	}
	return appendKeywordValue(connString, "options", opts), nil
}

// appendKeywordValue appends key=value to a keyword/value connection string.
// Later settings override earlier ones in both libpq and pgx.
func appendKeywordValue(connString, key, value string) string {
	kv := key + "=" + quoteValue(value)
	if strings.TrimSpace(connString) == "" {
		return kv
	}
	return connString + " " + kv
}

// quoteValue quotes a keyword/value connection string value when needed.
func quoteValue(v string) string {
	if v != "" && !strings.ContainsAny(v, " \t\n\r\\'") {
		return v
	}
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`)
	return "'" + r.Replace(v) + "'"
}

// keywordValue builds a keyword/value connection string from pairs.
func keywordValue(pairs ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(pairs); i += 2 {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(pairs[i])
		b.WriteByte('=')
		b.WriteString(quoteValue(pairs[i+1]))
	}
	return b.String()
}
