package dashboard

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
)

// authorized reports whether r carries the configured bearer token or basic-auth
// credentials. The comparisons take the same time whatever the input: both sides are
// hashed first, so neither their content nor their length leaks through timing.
func (h *handler) authorized(r *http.Request) bool {
	if tok := h.opt.BearerToken; tok != "" {
		if a, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && equal(a, tok) {
			return true
		}
	}
	if h.opt.BasicUser != "" && h.opt.BasicPassword != "" {
		if u, p, ok := r.BasicAuth(); ok {
			// Both are compared, always, so a right user name takes no longer to refuse.
			uok, pok := equal(u, h.opt.BasicUser), equal(p, h.opt.BasicPassword)
			if uok && pok {
				return true
			}
		}
	}
	return false
}

// equal compares a and b in constant time.
func equal(a, b string) bool {
	ha, hb := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(ha[:], hb[:]) == 1
}
