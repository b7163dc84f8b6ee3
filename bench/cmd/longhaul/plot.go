package main

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// series is one plotted measure of a sample; logY draws it on a logarithmic scale
// (pickups and depths: a queue that falls behind and one that keeps up differ by
// orders of magnitude).
type series struct {
	file, title, unit string
	logY              bool
	value             func(sample) float64
}

var plotted = []series{
	{"completed.png", "completions per second (offered: dashed)", "jobs/s", false, func(s sample) float64 { return s.completed }},
	{"pickup-p99.png", "pickup p99 of the jobs completed in each interval", "ms, log scale", true, func(s sample) float64 { return float64(s.p99) / 1e6 }},
	{"pickup-p50.png", "pickup p50 of the jobs completed in each interval", "ms, log scale", true, func(s sample) float64 { return float64(s.p50) / 1e6 }},
	{"depth.png", "queue depth (jobs not finished)", "jobs, log scale", true, func(s sample) float64 { return float64(s.depth) }},
	{"hot-table.png", "hot table and its indexes (jobc_jobs, river_job)", "MB", false, func(s sample) float64 { return float64(s.hotBytes) / 1e6 }},
	{"hot-dead.png", "dead tuples in the hot table (pgstattuple_approx)", "tuples", false, func(s sample) float64 { return float64(s.hotDead) }},
	{"history.png", "jobc_jobs_finished and its indexes (River keeps history in river_job)", "MB", false, func(s sample) float64 { return float64(s.historyBytes) / 1e6 }},
	{"worker-rss.png", "largest resident set of a worker process", "MB", false, func(s sample) float64 { return float64(s.workerRSS) / 1e6 }},
}

var systemColor = map[string]color.RGBA{
	"jobc":       {0x1f, 0x77, 0xb4, 0xff},
	"river":      {0xd6, 0x27, 0x28, 0xff},
	"river-fast": {0xff, 0x7f, 0x0e, 0xff},
}

func plotAll(dir string, cfg config, ss []sample) error {
	for _, p := range plotted {
		if err := plot(filepath.Join(dir, p.file), cfg, ss, p); err != nil {
			return fmt.Errorf("%s: %w", p.file, err)
		}
	}
	return nil
}

const (
	width, height       = 960, 400
	left, right         = 80, 20
	top, bottom         = 40, 50
	plotW, plotH        = width - left - right, height - top - bottom
	phaseShade    uint8 = 0xee
)

func plot(path string, cfg config, ss []sample, p series) error {
	img := image.NewRGBA(image.Rect(0, 0, width, height))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	var total time.Duration
	for _, ph := range cfg.phases {
		total += ph.dur
	}
	maxY := 0.0
	for _, s := range ss {
		maxY = max(maxY, p.value(s))
	}
	if p.file == "completed.png" {
		maxY = max(maxY, cfg.rate)
	}
	maxY = niceCeil(maxY)
	x := func(at time.Duration) int { return left + int(float64(plotW)*at.Seconds()/total.Seconds()) }
	y := func(v float64) int { return top + plotH - int(float64(plotH)*v/maxY) }
	// On a log scale: from 1 to the power of ten at or above the largest value;
	// values below 1 sit on the axis.
	decades := math.Ceil(math.Log10(max(maxY, 10)))
	if p.logY {
		maxY = math.Pow(10, decades)
		y = func(v float64) int {
			return top + plotH - int(float64(plotH)*math.Log10(max(v, 1))/decades)
		}
	}
	// The phases: the pinned one shaded, each named at its start (a phase of no
	// length, as the pinned and recovery phases of a soak, not at all).
	var at time.Duration
	for i, ph := range cfg.phases {
		if ph.dur == 0 {
			continue
		}
		if ph.name == "pinned" {
			draw.Draw(img, image.Rect(x(at), top, x(at+ph.dur), top+plotH), &image.Uniform{color.RGBA{0xff, 0xf0, 0xd0, 0xff}}, image.Point{}, draw.Src)
		}
		vline(img, x(at), top, top+plotH, color.RGBA{0xbb, 0xbb, 0xbb, 0xff}, 1)
		text(img, x(at)+4, top+14+14*(i%2), ph.name, color.Black)
		at += ph.dur
	}
	// Axes, and a grid line per fifth of the range.
	ticks := 5
	if p.logY {
		ticks = int(decades)
	}
	for i := 0; i <= ticks; i++ {
		v := maxY * float64(i) / float64(ticks)
		if p.logY {
			v = math.Pow(10, float64(i))
		}
		hline(img, left, left+plotW, y(v), color.RGBA{0xe0, 0xe0, 0xe0, 0xff}, 1)
		label := trimFloat(v)
		text(img, left-8-7*len(label), y(v)+4, label, color.Black)
	}
	vline(img, left, top, top+plotH, color.Black, 1)
	hline(img, left, left+plotW, top+plotH, color.Black, 1)
	step := niceCeil(total.Seconds() / 8)
	for t := 0.0; t <= total.Seconds(); t += step {
		px := x(time.Duration(t * float64(time.Second)))
		vline(img, px, top+plotH, top+plotH+4, color.Black, 1)
		label := fmt.Sprintf("%.0fs", t)
		text(img, px-7*len(label)/2, top+plotH+18, label, color.Black)
	}
	text(img, left, 20, p.title+" ("+p.unit+")", color.Black)
	if p.file == "completed.png" {
		dashed(img, x(0), x(total), y(cfg.rate), color.RGBA{0x55, 0x55, 0x55, 0xff})
	}
	// One line per system, and its name in the legend.
	legend := left + plotW - 10
	for i := len(cfg.systems) - 1; i >= 0; i-- {
		sys := cfg.systems[i]
		c := systemColor[sys]
		var prev image.Point
		first := true
		for _, s := range ss {
			if s.system != sys {
				continue
			}
			pt := image.Pt(x(s.at), y(p.value(s)))
			if !first {
				line(img, prev, pt, c)
			}
			prev, first = pt, false
		}
		legend -= 7*len(sys) + 30
		hline(img, legend, legend+18, top+plotH+36, c, 3)
		text(img, legend+22, top+plotH+40, sys, color.Black)
	}
	text(img, left, top+plotH+40, "time since the warm-up began", color.Black)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten (1 for 0).
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func trimFloat(v float64) string {
	if v >= 100 || v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2g", v)
}

func text(img *image.RGBA, x, y int, s string, c color.Color) {
	d := font.Drawer{Dst: img, Src: image.NewUniform(c), Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
	d.DrawString(s)
}

func hline(img *image.RGBA, x0, x1, y int, c color.Color, w int) {
	for x := x0; x <= x1; x++ {
		for k := range w {
			img.Set(x, y+k-w/2, c)
		}
	}
}

func vline(img *image.RGBA, x, y0, y1 int, c color.Color, w int) {
	for y := y0; y <= y1; y++ {
		for k := range w {
			img.Set(x+k-w/2, y, c)
		}
	}
}

func dashed(img *image.RGBA, x0, x1, y int, c color.Color) {
	for x := x0; x <= x1; x++ {
		if (x/6)%2 == 0 {
			img.Set(x, y, c)
		}
	}
}

// line draws a 2-pixel line from a to b (Bresenham).
func line(img *image.RGBA, a, b image.Point, c color.Color) {
	dx, dy := abs(b.X-a.X), -abs(b.Y-a.Y)
	sx, sy := sign(b.X-a.X), sign(b.Y-a.Y)
	e := dx + dy
	for {
		img.Set(a.X, a.Y, c)
		img.Set(a.X, a.Y+1, c)
		if a == b {
			return
		}
		if e2 := 2 * e; e2 >= dy {
			e += dy
			a.X += sx
		} else {
			e += dx
			a.Y += sy
		}
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func sign(v int) int {
	switch {
	case v < 0:
		return -1
	case v > 0:
		return 1
	}
	return 0
}
