// Package netfault puts a TCP proxy between a test's clients and a server, to
// reproduce network faults that real networks have and loopback does not: a link that
// stops delivering packets without closing anything (a dead route, a silent firewall,
// a frozen host). It is test support code.
//
//	p, err := netfault.Listen("unix", "/tmp/pg/.s.PGSQL.5432")
//	dsn := fmt.Sprintf("host=127.0.0.1 port=%d ...", p.Port())
//	p.Blackhole() // bytes stop flowing both ways; connections stay open
//	p.Heal()      // what was held back is delivered, as TCP retransmission would
package netfault
