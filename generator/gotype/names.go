package gotype

import (
	"strings"
	"unicode"
)

// commonInitialisms are written in upper case in Go names (as golint and the Go style
// guide do): user_id → UserID, callback_url → CallbackURL.
var commonInitialisms = map[string]bool{
	"ACL": true, "API": true, "ASCII": true, "CPU": true, "CSS": true, "CSV": true, "DNS": true,
	"EOF": true, "GUID": true, "HTML": true, "HTTP": true, "HTTPS": true, "ID": true, "IP": true,
	"JSON": true, "JWT": true, "LHS": true, "PDF": true, "QPS": true, "RAM": true, "RHS": true,
	"RPC": true, "SKU": true, "SLA": true, "SMS": true, "SMTP": true, "SQL": true, "SSH": true,
	"TCP": true, "TLS": true, "TTL": true, "UDP": true, "UI": true, "UID": true, "URI": true,
	"URL": true, "UTC": true, "UTF8": true, "UUID": true, "VM": true, "XML": true, "XMPP": true,
	"XSRF": true, "XSS": true,
}

// GoName turns a snake_case, kebab-case, dotted or camelCase name into an exported Go
// identifier with Go initialisms: "invoice_id" → "InvoiceID", "callbackUrl" →
// "CallbackURL". It returns "" when name has no letters or digits.
func GoName(name string) string {
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
		case unicode.IsUpper(r) && i > 0 && (unicode.IsLower(runes[i-1]) || (i+1 < len(runes) && unicode.IsLower(runes[i+1]) && unicode.IsUpper(runes[i-1]))):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	var b strings.Builder
	for _, w := range words {
		up := strings.ToUpper(w)
		if commonInitialisms[up] {
			b.WriteString(up)
			continue
		}
		rs := []rune(strings.ToLower(w))
		rs[0] = unicode.ToUpper(rs[0])
		b.WriteString(string(rs))
	}
	s := b.String()
	if s != "" && unicode.IsDigit([]rune(s)[0]) {
		s = "X" + s
	}
	return s
}

// lowerFirst makes an unexported identifier from an exported one: SendEmail →
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
		i = min(i, len(rs))
	default:
		i-- // keep the last capital: it starts the next word (URLCheck → urlCheck)
	}
	return strings.ToLower(string(rs[:i])) + string(rs[i:])
}
