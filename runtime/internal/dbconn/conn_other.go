//go:build !linux

package dbconn

import (
	"net"
	"time"
)

// setUserTimeout does nothing where TCP_USER_TIMEOUT does not exist; keepalives and
// statement timeouts still bound a stalled connection.
func setUserTimeout(*net.TCPConn, time.Duration) error { return nil }
