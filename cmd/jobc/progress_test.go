package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestProgressOffTerminal: written to a file or a pipe, progress is a plain line at
// every tenth, without the carriage returns and escape sequences of a bar.
func TestProgressOffTerminal(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, "burn-down", 1000)
	for i := 0; i <= 1000; i += 7 {
		p.Set(i)
	}
	p.Set(1000)
	p.Finish()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 10 || lines[0] != "burn-down: 105/1000 (10%)" || lines[9] != "burn-down: 1000/1000 (100%)" {
		t.Errorf("want 10 lines from 10%% to 100%%, got %d:\n%s", len(lines), buf.String())
	}
	if strings.ContainsAny(buf.String(), "\r\x1b") {
		t.Errorf("plain progress has carriage returns or escapes: %q", buf.String())
	}
	// A phase that ends between two tenths still says where it stopped, once.
	buf.Reset()
	p = newProgress(&buf, "enqueue", 100)
	p.Set(42)
	p.Set(47)
	p.Finish()
	if got := buf.String(); got != "enqueue: 42/100 (42%)\nenqueue: 47/100 (47%)\n" {
		t.Errorf("early finish: %q", got)
	}
	f, err := os.Create(t.TempDir() + "/log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Error("a regular file is taken for a terminal")
	}
}

// TestProgressBar: on a terminal, progress redraws one line at each percent and
// clears it at the end.
func TestProgressBar(t *testing.T) {
	var buf bytes.Buffer
	p := &barProgress{w: &buf, desc: "enqueue", total: 200, drawn: -1}
	p.Set(0)
	p.Set(1) // still 0%: not redrawn
	p.Set(100)
	p.Finish()
	want := "\renqueue [                    ] 0/200 (0%)\renqueue [##########          ] 100/200 (50%)\r\x1b[K"
	if got := buf.String(); got != want {
		t.Errorf("bar:\n%q\nwant\n%q", got, want)
	}
}
