package dbconn

import (
	"net"
	"syscall"
	"time"
)

// tcpUserTimeoutOpt is TCP_USER_TIMEOUT from linux/tcp.h, the same on every
// architecture; package syscall defines it for only some of them.
const tcpUserTimeoutOpt = 0x12

// setUserTimeout sets TCP_USER_TIMEOUT: data the peer has not acknowledged after d
// breaks the connection, where Linux would otherwise retransmit for about 15 minutes.
func setUserTimeout(c *net.TCPConn, d time.Duration) error {
	raw, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	err = raw.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, tcpUserTimeoutOpt, int(d.Milliseconds()))
	})
	if err != nil {
		return err
	}
	return serr
}
