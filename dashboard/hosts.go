package dashboard

import (
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
)

// DNS rebinding: a page of an attacker's site points its own host name at 127.0.0.1
// and, being same-origin with itself, reads what the loopback dashboard answers and
// posts to it (the CSRF checks pass: the browser thinks the dashboard is the attacker's
// site). The one thing such a request cannot fake is the Host header, which names the
// attacker's host. So a request that arrived on a loopback address must name a loopback
// host (at the port it arrived on) or a name the operator allowed.

// hostCheck decides whether a request's Host is one this dashboard answers.
type hostCheck struct {
	names map[string]bool // allowed host names at any port, lower case
	exact map[string]bool // allowed "name:port", lower case
}

// newHostCheck parses Options.AllowedHosts: "name" allows the name at any port,
// "name:port" at that port alone.
func newHostCheck(allowed []string) (*hostCheck, error) {
	c := &hostCheck{names: map[string]bool{}, exact: map[string]bool{}}
	for i, a := range allowed {
		if a == "" || a != strings.TrimSpace(a) || strings.ContainsAny(a, "/ \t\r\n@") {
			return nil, fmt.Errorf("dashboard: Options.AllowedHosts[%d] %q: want a host name, optionally with :port", i, a)
		}
		a = strings.ToLower(a)
		if h, p, err := net.SplitHostPort(a); err == nil {
			if n, err := strconv.ParseUint(p, 10, 16); err != nil || n == 0 || h == "" {
				return nil, fmt.Errorf("dashboard: Options.AllowedHosts[%d] %q: bad port", i, allowed[i])
			}
			c.exact[a] = true
			continue
		}
		c.names[strings.TrimSuffix(strings.TrimPrefix(a, "["), "]")] = true
	}
	return c, nil
}

// refuse returns why r's Host is not answered, or "" when it is. It applies to
// requests that arrived on a loopback address, and to every request once names are
// allowed; a request that did not come through an http.Server (no local address) is
// checked against the allowed names only, when there are some.
func (c *hostCheck) refuse(r *http.Request) string {
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	localHost, localPort := "", ""
	if local != nil {
		localHost, localPort, _ = net.SplitHostPort(local.String())
	}
	ip := net.ParseIP(localHost)
	onLoopback := ip != nil && ip.IsLoopback()
	if !onLoopback && len(c.names) == 0 && len(c.exact) == 0 {
		return ""
	}
	host := strings.ToLower(r.Host)
	name, port, err := net.SplitHostPort(host)
	if err != nil { // no port
		name, port = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"), ""
	}
	if c.names[name] || c.exact[host] {
		return ""
	}
	if onLoopback && isLoopbackName(name) {
		// A browser sends the port unless it is the scheme's default.
		def := "80"
		if r.TLS != nil {
			def = "443"
		}
		if port == localPort || (port == "" && localPort == def) {
			return ""
		}
	}
	return fmt.Sprintf("jobc dashboard: this server does not answer for host %q (a defence against DNS rebinding): "+
		"open it by 127.0.0.1 or localhost, or allow the name a proxy uses (jobc ui --allowed-host NAME, Options.AllowedHosts)", r.Host)
}

// isLoopbackName reports whether a Host name always means this machine: "localhost"
// (which browsers resolve to loopback themselves) or a loopback IP literal. A DNS name
// that resolves to 127.0.0.1 is not one: that is what rebinding looks like.
func isLoopbackName(name string) bool {
	if name == "localhost" {
		return true
	}
	ip := net.ParseIP(name)
	return ip != nil && ip.IsLoopback()
}
