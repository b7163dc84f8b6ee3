package dashboard

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// csrfCookie holds the browser's random CSRF secret; every form repeats a token
// derived from it, which a page of another site can neither read nor forge.
const (
	csrfCookie = "jobc_csrf"
	csrfField  = "csrf"
)

// csrf issues and checks CSRF tokens: the token of a form is the HMAC, under a key of
// this process, of the browser's cookie. Checking the HMAC (not mere equality of cookie
// and field) means a cookie planted by a sibling subdomain does not help an attacker
// either; a restart changes the key, and the next page view issues matching tokens.
type csrf struct {
	key []byte
}

func newCSRF() (*csrf, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("dashboard: csrf key: %w", err)
	}
	return &csrf{key: key}, nil
}

func (c *csrf) token(secret string) string {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte(secret))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// issue returns the form token for r, setting the cookie first if r has none.
func (c *csrf) issue(w http.ResponseWriter, r *http.Request, path string) (string, error) {
	if ck, err := r.Cookie(csrfCookie); err == nil && len(ck.Value) >= 32 {
		return c.token(ck.Value), nil
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("dashboard: csrf cookie: %w", err)
	}
	secret := base64.RawURLEncoding.EncodeToString(b)
	http.SetCookie(w, &http.Cookie{Name: csrfCookie, Value: secret, Path: path, HttpOnly: true,
		Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
	return c.token(secret), nil
}

// check returns why r is not a genuine form post of this dashboard, or "" when it is.
func (c *csrf) check(r *http.Request) string {
	// Browsers say where a request comes from; a cross-site one is refused whatever
	// it carries. Clients that send neither header (curl, old browsers) fall through
	// to the token, which they cannot have without reading a page.
	if s := r.Header.Get("Sec-Fetch-Site"); s != "" && s != "same-origin" {
		return "cross-site request (Sec-Fetch-Site: " + s + ")"
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || !strings.EqualFold(u.Host, r.Host) {
			return "request from another origin (" + o + ")"
		}
	}
	ck, err := r.Cookie(csrfCookie)
	if err != nil || ck.Value == "" {
		return "no CSRF cookie: reload the page and try again"
	}
	got := r.PostFormValue(csrfField)
	if got == "" || !hmac.Equal([]byte(got), []byte(c.token(ck.Value))) {
		return "missing or invalid CSRF token: reload the page and try again"
	}
	return ""
}
