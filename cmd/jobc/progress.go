package main

import (
	"fmt"
	"io"
	"strings"

	"golang.org/x/term"
)

// progress reports how far a long phase got.
type progress interface {
	Set(done int)
	Finish()
}

// newProgress returns a progress bar when w is a terminal, and otherwise a reporter
// that writes a plain line at every tenth of the way: a bar in a log file or a CI
// transcript is a screenful of carriage returns.
func newProgress(w io.Writer, desc string, total int) progress {
	if isTerminal(w) {
		return &barProgress{w: w, desc: desc, total: total, drawn: -1}
	}
	return &lineProgress{w: w, desc: desc, total: total, printed: -1}
}

// isTerminal reports whether w is a file open on a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(f.Fd()))
}

// barProgress redraws one line, "desc [#####     ] done/total (p%)", at each percent,
// and clears it when the phase ends. (A library for it would add five modules to the
// graph of every project that runs jobc as a tool.)
type barProgress struct {
	w     io.Writer
	desc  string
	total int
	drawn int // the percentage on the line, -1 before the first
}

const barWidth = 20

func (p *barProgress) Set(done int) {
	pct := 100
	if p.total > 0 {
		pct = max(0, min(100, done*100/p.total))
	}
	if pct == p.drawn {
		return
	}
	p.drawn = pct
	n := pct * barWidth / 100
	fmt.Fprintf(p.w, "\r%s [%s%s] %d/%d (%d%%)", p.desc, strings.Repeat("#", n), strings.Repeat(" ", barWidth-n), done, p.total, pct)
}

// Finish clears the line.
func (p *barProgress) Finish() { fmt.Fprint(p.w, "\r\x1b[K") }

// lineProgress writes "desc: done/total (p%)" each time another tenth is done.
type lineProgress struct {
	w           io.Writer
	desc        string
	total, done int
	tenths      int // tenths reported so far
	printed     int // done at the last line, -1 before the first
}

func (p *lineProgress) Set(done int) {
	p.done = done
	if p.total <= 0 {
		return
	}
	if t := min(10, done*10/p.total); t > p.tenths {
		p.tenths = t
		p.print()
	}
}

// Finish writes where the phase ended, unless the last line already said so.
func (p *lineProgress) Finish() {
	if p.printed != p.done {
		p.print()
	}
}

func (p *lineProgress) print() {
	p.printed = p.done
	pct := 100
	if p.total > 0 {
		pct = p.done * 100 / p.total
	}
	fmt.Fprintf(p.w, "%s: %d/%d (%d%%)\n", p.desc, p.done, p.total, pct)
}
