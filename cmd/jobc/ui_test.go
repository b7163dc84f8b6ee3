package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/cmd/internal/cli"
)

// TestUIRefusesToStart: on an address other than loopback without authentication, with
// half of the basic-auth credentials, or with a bad prefix, `jobc ui` exits 2 and says
// how to fix it, before touching the database.
func TestUIRefusesToStart(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://nobody@127.0.0.1:1/none")
	for _, c := range []struct {
		args []string
		env  map[string]string
		says []string
	}{
		{[]string{"ui", "--addr", "0.0.0.0:8080"}, nil, []string{"not a loopback address", envUIToken, envUIUser, envUIPassword}},
		{[]string{"ui", "--addr", ":8080"}, nil, []string{"not a loopback address"}},
		{[]string{"ui", "--addr", "192.0.2.10:8080"}, map[string]string{envUIUser: "ops"}, []string{"set both " + envUIUser + " and " + envUIPassword}},
		{[]string{"ui", "--prefix", "jobs/"}, nil, []string{`--prefix "jobs/" must start with /`}},
		{[]string{"ui", "--addr", "nonsense"}, nil, []string{"--addr"}},
		{[]string{"ui", "extra"}, nil, []string{"unknown command"}},
		// Weak secrets: a one-space token, a short one, a pasted newline.
		{[]string{"ui"}, map[string]string{envUIToken: " "}, []string{envUIToken + " starts or ends with white space"}},
		{[]string{"ui"}, map[string]string{envUIToken: "letmein"}, []string{envUIToken + " is 7 bytes: use at least 16"}},
		{[]string{"ui"}, map[string]string{envUIUser: "ops", envUIPassword: "0123456789abcdef\n"}, []string{envUIPassword + " starts or ends"}},
		{[]string{"ui", "--allowed-host", "a b"}, nil, []string{"--allowed-host[0]", "want a host name"}},
		{[]string{"ui", "--tls-cert", "cert.pem"}, nil, []string{"--tls-cert and --tls-key go together"}},
		{[]string{"ui", "--tls-key", "key.pem"}, nil, []string{"--tls-cert and --tls-key go together"}},
		{[]string{"ui", "--tls-cert", "/nonexistent/cert.pem", "--tls-key", "/nonexistent/key.pem"}, nil, []string{"--tls-cert /nonexistent/cert.pem", "no such file"}},
		{[]string{"ui", "--query-timeout", "-1s"}, nil, []string{"--query-timeout -1s is negative"}},
	} {
		for _, k := range []string{envUIToken, envUIUser, envUIPassword} {
			t.Setenv(k, c.env[k])
		}
		_, errOut, code := jobc(t, c.args...)
		if code != cli.ExitUsage {
			t.Errorf("jobc %s: exit %d, want %d; stderr:\n%s", strings.Join(c.args, " "), code, cli.ExitUsage, errOut)
		}
		for _, s := range c.says {
			if !strings.Contains(errOut, s) {
				t.Errorf("jobc %s: stderr does not say %q:\n%s", strings.Join(c.args, " "), s, errOut)
			}
		}
	}
}

// lockedBuffer is a bytes.Buffer the command writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestUIServes starts `jobc ui` under a prefix on a free loopback port, reads the
// schedules from the example shop's spec (-C), and stops it with its context.
func TestUIServes(t *testing.T) {
	_, url := migratedDB(t)
	for _, k := range []string{envUIToken, envUIUser, envUIPassword} {
		t.Setenv(k, "")
	}
	ctx, cancel := context.WithCancel(t.Context())
	var out, errOut lockedBuffer
	done := make(chan int, 1)
	shop, err := filepath.Abs(filepath.Join("..", "..", "examples", "shop"))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		done <- run(ctx, []string{"ui", "-C", shop, "--addr", "127.0.0.1:0", "--prefix", "/ops/", "--read-only", "--database-url", url}, &out, &errOut)
	}()
	addr := regexp.MustCompile(`serving (http://\S+/ops/) \(read-only\)`)
	var base string
	for deadline := time.Now().Add(30 * time.Second); base == ""; time.Sleep(20 * time.Millisecond) {
		if m := addr.FindStringSubmatch(out.String()); m != nil {
			base = m[1]
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("jobc ui did not say where it serves within 30s; stdout %q, stderr %q", out.String(), errOut.String())
		}
	}
	get := func(u string) (int, string) {
		t.Helper()
		res, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		return res.StatusCode, string(b)
	}
	if status, body := get(base + "periodic"); status != http.StatusOK || !strings.Contains(body, "daily_sales_report") ||
		!strings.Contains(body, "0 6 * * *") || !strings.Contains(body, "purge_expired_carts") {
		t.Errorf("GET %speriodic: %d, want the shop's scheduled jobs:\n%s", base, status, body)
	}
	if status, body := get(base); status != http.StatusOK || !strings.Contains(body, `href="/ops/queues"`) || strings.Contains(body, `method="post"`) {
		t.Errorf("GET %s: %d, want the read-only overview under /ops/:\n%s", base, status, body)
	}
	cancel()
	select {
	case code := <-done:
		if code != cli.ExitOK {
			t.Errorf("jobc ui exited %d after its context ended, want 0; stderr:\n%s", code, errOut.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("jobc ui did not stop within 30s of its context ending")
	}
}

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key to dir, and
// returns their paths and a pool that trusts the certificate.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, roots *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "jobc ui test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost", "jobs.example.test"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	writeFile(t, certFile, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
	writeFile(t, keyFile, string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})))
	roots = x509.NewCertPool()
	roots.AddCert(cert)
	return certFile, keyFile, roots
}

// TestUIServesTLS starts `jobc ui --tls-cert --tls-key` with a certificate made here,
// fetches pages over HTTPS, and checks the Host allowlist there too: loopback names
// and --allowed-host are answered, another name (DNS rebinding) gets 421.
func TestUIServesTLS(t *testing.T) {
	_, url := migratedDB(t)
	for _, k := range []string{envUIToken, envUIUser, envUIPassword} {
		t.Setenv(k, "")
	}
	certFile, keyFile, roots := selfSigned(t, t.TempDir())
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var out, errOut lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"ui", "--addr", "127.0.0.1:0", "--tls-cert", certFile, "--tls-key", keyFile,
			"--allowed-host", "jobs.example.test", "--database-url", url}, &out, &errOut)
	}()
	addr := regexp.MustCompile(`serving https://(\S+)/\n`)
	var hostport string
	for deadline := time.Now().Add(30 * time.Second); hostport == ""; time.Sleep(20 * time.Millisecond) {
		if m := addr.FindStringSubmatch(out.String()); m != nil {
			hostport = m[1]
		}
		select {
		case code := <-done:
			t.Fatalf("jobc ui exited %d before serving; stderr:\n%s", code, errOut.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("jobc ui did not say where it serves within 30s; stdout %q, stderr %q", out.String(), errOut.String())
		}
	}
	_, port, err := net.SplitHostPort(hostport)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	get := func(host string) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "https://"+hostport+"/queues", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		if res.TLS == nil {
			t.Errorf("GET with Host %s: answered without TLS", host)
		}
		return res.StatusCode, string(b)
	}
	for _, c := range []struct {
		host string
		want int
	}{
		{"127.0.0.1:" + port, http.StatusOK},
		{"localhost:" + port, http.StatusOK},
		{"jobs.example.test", http.StatusOK},
		{"evil.test:" + port, http.StatusMisdirectedRequest},
	} {
		if status, body := get(c.host); status != c.want {
			t.Errorf("GET https://%s/queues with Host %s: %d, want %d:\n%s", hostport, c.host, status, c.want, body)
		}
	}
	// Plain HTTP on the HTTPS port gets no page.
	if res, err := http.Get("http://" + hostport + "/queues"); err == nil {
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if strings.Contains(string(b), "<h1>Queues") {
			t.Errorf("plain HTTP on the HTTPS port served the page:\n%s", b)
		}
	}
	cancel()
	select {
	case code := <-done:
		if code != cli.ExitOK {
			t.Errorf("jobc ui exited %d after its context ended, want 0; stderr:\n%s", code, errOut.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("jobc ui did not stop within 30s of its context ending")
	}
}
