package netfault

import (
	"fmt"
	"net"
	"sync"
)

// Proxy accepts TCP connections on 127.0.0.1 and forwards each to the target. It is
// safe for concurrent use.
type Proxy struct {
	ln            net.Listener
	network, addr string // the target
	done          chan struct{}
	wg            sync.WaitGroup
	mu            sync.Mutex
	healed        chan struct{} // closed while traffic flows
	conns         map[net.Conn]struct{}
	accepted      int
	closeOnce     sync.Once
}

// Listen starts a proxy on a free port of 127.0.0.1 that forwards to the target,
// given as for net.Dial ("tcp", "127.0.0.1:5432"; "unix", "/path/.s.PGSQL.5432").
func Listen(network, target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("netfault: listen: %w", err)
	}
	p := &Proxy{
		ln:      ln,
		network: network,
		addr:    target,
		done:    make(chan struct{}),
		healed:  make(chan struct{}),
		conns:   map[net.Conn]struct{}{},
	}
	close(p.healed)
	p.wg.Add(1)
	go p.acceptLoop()
	return p, nil
}

// Port is the port the proxy listens on, on 127.0.0.1.
func (p *Proxy) Port() int { return p.ln.Addr().(*net.TCPAddr).Port }

// Addr is the address the proxy listens on.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Blackhole stops forwarding: bytes read from either side are held back, and so is
// the end of a stream, so neither side sees data, a FIN or a reset. New connections are
// accepted (the kernel completes the handshake regardless) but nothing passes on
// them either. Blackholing a blackholed proxy does nothing.
func (p *Proxy) Blackhole() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.healed:
		p.healed = make(chan struct{})
	default:
	}
}

// Heal lets traffic flow again; what was held back is delivered first, as a network
// whose TCP retransmissions finally get through would deliver it.
func (p *Proxy) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.healed:
	default:
		close(p.healed)
	}
}

// Blackholed reports whether traffic is held back.
func (p *Proxy) Blackholed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.healed:
		return false
	default:
		return true
	}
}

// Accepted is the number of connections the proxy has accepted so far.
func (p *Proxy) Accepted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted
}

// Close stops listening and closes every connection, and waits for the forwarding
// goroutines to end.
func (p *Proxy) Close() error {
	var err error
	p.closeOnce.Do(func() {
		close(p.done)
		err = p.ln.Close()
		p.mu.Lock()
		for c := range p.conns {
			_ = c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return err
}

func (p *Proxy) acceptLoop() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		server, err := net.Dial(p.network, p.addr)
		if err != nil {
			_ = client.Close() // the server is down: the client sees what it would without the proxy
			continue
		}
		if !p.track(client, server) {
			_ = client.Close()
			_ = server.Close()
			return
		}
		p.wg.Add(2)
		go p.pump(server, client)
		go p.pump(client, server)
	}
}

// track records a connection pair, unless the proxy is closing.
func (p *Proxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.done:
		return false
	default:
	}
	p.accepted++
	for _, c := range conns {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *Proxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		delete(p.conns, c)
		_ = c.Close()
	}
}

// flowing waits until traffic may pass, and reports false if the proxy closed first.
func (p *Proxy) flowing() bool {
	p.mu.Lock()
	healed := p.healed
	p.mu.Unlock()
	select {
	case <-healed:
		return true
	case <-p.done:
		return false
	}
}

// pump copies src to dst, holding back each chunk (and the end of the stream) while
// the proxy is blackholed. When either side ends, both are closed.
func (p *Proxy) pump(dst, src net.Conn) {
	defer p.wg.Done()
	defer p.untrack(dst, src)
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if !p.flowing() {
			return
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil { // end of stream, reset or closed: the pair ends either way
			return
		}
	}
}
