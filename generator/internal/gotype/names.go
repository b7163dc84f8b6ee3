package gotype

import (
	"sort"
	"strings"
	"unicode"
)

// commonInitialisms are written in upper case in Go names (as golint and the Go style
// guide do): user_id → UserID, callback_url → CallbackURL.
var commonInitialisms = map[string]bool{
	"ACL": true, "AMQP": true, "API": true, "ASCII": true, "CPU": true, "CSS": true, "CSV": true,
	"DB": true, "DNS": true, "EOF": true, "GID": true, "GUID": true, "HTML": true, "HTTP": true,
	"HTTPS": true, "ID": true, "IP": true, "JSON": true, "JWT": true, "LHS": true, "PDF": true,
	"QPS": true, "RAM": true, "RHS": true, "RPC": true, "SKU": true, "SLA": true, "SMS": true,
	"SMTP": true, "SQL": true, "SSH": true, "TCP": true, "TLS": true, "TTL": true, "UDP": true,
	"UI": true, "UID": true, "URI": true, "URL": true, "UTC": true, "UTF8": true, "UUID": true,
	"VM": true, "XML": true, "XMPP": true, "XSRF": true, "XSS": true,
}

// specialWords are written in mixed case.
var specialWords = map[string]string{"IPV4": "IPv4", "IPV6": "IPv6", "OAUTH": "OAuth"}

// GoName turns a snake_case, kebab-case, dotted or camelCase name into an exported Go
// identifier with Go initialisms: "invoice_id" → "InvoiceID", "callbackUrl" →
// "CallbackURL", "user_ids" → "UserIDs". It returns "" when name has no letters or
// digits, and prefixes X when it would start with a digit ("2fa_code" → "X2faCode").
func GoName(name string) string {
	s := nameWords(name)
	if s != "" && unicode.IsDigit([]rune(s)[0]) {
		s = "X" + s
	}
	return s
}

// nameWords is GoName without the X before a leading digit: the end of a longer name.
func nameWords(name string) string {
	var b strings.Builder
	for _, w := range splitWords(name) {
		up := strings.ToUpper(w)
		switch {
		case commonInitialisms[up]:
			b.WriteString(up)
		case specialWords[up] != "":
			b.WriteString(specialWords[up])
		case len(w) > 2 && (w[len(w)-1] == 's' || w[len(w)-1] == 'S') && commonInitialisms[up[:len(up)-1]]:
			b.WriteString(up[:len(up)-1] + "s") // ids → IDs, URLs → URLs
		default:
			rs := []rune(strings.ToLower(w))
			rs[0] = unicode.ToUpper(rs[0])
			b.WriteString(string(rs))
		}
	}
	return b.String()
}

// splitWords splits a name at non-alphanumeric characters and camelCase humps. A run of
// capitals is one word, except that its last capital starts the next word when a
// lower-case letter follows (HTMLBody → HTML, Body), unless that letter is the s of a
// plural initialism (userIDs → user, IDs).
func splitWords(name string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, string(cur))
			cur = cur[:0]
		}
	}
	runes := []rune(name)
	for i, r := range runes {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && i > 0 && unicode.IsLower(runes[i-1]):
			flush()
			cur = append(cur, r)
		case unicode.IsUpper(r) && i > 0 && unicode.IsUpper(runes[i-1]) && i+1 < len(runes) && unicode.IsLower(runes[i+1]) && !pluralInitialism(runes, i):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return words
}

// pluralInitialism reports whether the capitals that end at i are an initialism
// followed by a plural s that ends the word (IDs, URLs).
func pluralInitialism(runes []rune, i int) bool {
	if i+1 >= len(runes) || runes[i+1] != 's' || (i+2 < len(runes) && unicode.IsLower(runes[i+2])) {
		return false
	}
	start := i
	for start > 0 && unicode.IsUpper(runes[start-1]) {
		start--
	}
	return commonInitialisms[string(runes[start:i+1])]
}

// LowerFirst makes an unexported identifier from an exported one: SendEmail →
// sendEmail, URLCheck → urlCheck, ID → id.
func LowerFirst(s string) string {
	rs := []rune(s)
	i := 0
	for i < len(rs) && unicode.IsUpper(rs[i]) {
		i++
	}
	switch {
	case i == 0:
		return s
	case i == 1 || i == len(rs):
	case rs[i] == 's' && commonInitialisms[string(rs[:i])]:
		// IDsByUser → idsByUser
	default:
		i-- // keep the last capital: it starts the next word (URLCheck → urlCheck)
	}
	return strings.ToLower(string(rs[:i])) + string(rs[i:])
}

// singular makes an element type name from a collection's: LineItems → LineItem,
// Categories → Category, Addresses → Address, Statuses → Status. A name that is not a
// recognisable plural gets Item: Status → StatusItem, Data → DataItem.
func singular(s string) string {
	lower := strings.ToLower(s)
	switch {
	case strings.HasSuffix(lower, "ies") && len(s) > 4:
		return s[:len(s)-3] + "y"
	case strings.HasSuffix(lower, "sses"), strings.HasSuffix(lower, "uses"),
		strings.HasSuffix(lower, "xes"), strings.HasSuffix(lower, "ches"),
		strings.HasSuffix(lower, "shes"), strings.HasSuffix(lower, "zzes"):
		return s[:len(s)-2]
	case strings.HasSuffix(lower, "ss"), strings.HasSuffix(lower, "us"), strings.HasSuffix(lower, "is"):
		return s + "Item"
	case strings.HasSuffix(lower, "s") && len(s) > 1:
		return s[:len(s)-1]
	}
	return s + "Item"
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
