package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/jobc-dev/jobc/bench"
)

// table collects each run's number per measurement and variant.
type table struct {
	variants []variant
	order    []string
	lower    map[string]bool // lower is better (latencies)
	vals     map[string]map[string][]float64
}

func newTable(vs []variant) *table {
	return &table{variants: vs, lower: map[string]bool{}, vals: map[string]map[string][]float64{}}
}

func (t *table) add(name, label string, v float64) {
	if t.vals[name] == nil {
		t.vals[name] = map[string][]float64{}
		t.order = append(t.order, name)
	}
	t.vals[name][label] = append(t.vals[name][label], v)
}

func (t *table) addLower(name, label string, v float64) {
	t.lower[name] = true
	t.add(name, label, v)
}

// print writes, per measurement, the median of each variant, jobc's ratio to each
// River variant and to the sql ceiling (median of the per-run ratios, each taken within one run) and every
// run's value.
func (t *table) print(w io.Writer) {
	var labels, rivers []string
	for _, v := range t.variants {
		labels = append(labels, v.label)
		if v.sys == "river" || isCeiling(v.sys) {
			rivers = append(rivers, v.label)
		}
	}
	fmt.Fprintf(w, "| %-42s |", "measurement (median of runs)")
	for _, l := range labels {
		fmt.Fprintf(w, " %10s |", l)
	}
	for _, r := range rivers {
		fmt.Fprintf(w, " %12s |", "jobc/"+r)
	}
	fmt.Fprintf(w, " runs\n|%s|", strings.Repeat("-", 44))
	for range labels {
		fmt.Fprintf(w, "%s|", strings.Repeat("-", 12))
	}
	for range rivers {
		fmt.Fprintf(w, "%s|", strings.Repeat("-", 14))
	}
	fmt.Fprintln(w, "------")
	for _, name := range t.order {
		fmt.Fprintf(w, "| %-42s |", name)
		for _, l := range labels {
			if vs := t.vals[name][l]; len(vs) > 0 {
				fmt.Fprintf(w, " %10s |", num(bench.Median(vs)))
			} else {
				fmt.Fprintf(w, " %10s |", "-")
			}
		}
		for _, r := range rivers {
			js, rs := t.vals[name]["jobc"], t.vals[name][r]
			n := min(len(js), len(rs))
			if n == 0 {
				fmt.Fprintf(w, " %12s |", "-")
				continue
			}
			ratios := make([]float64, n)
			for i := range n {
				ratios[i] = js[i] / rs[i]
			}
			fmt.Fprintf(w, " %11.2fx |", bench.Median(ratios))
		}
		var all []string
		for _, l := range labels {
			var s []string
			for _, v := range t.vals[name][l] {
				s = append(s, num(v))
			}
			all = append(all, l+"="+strings.Join(s, "/"))
		}
		fmt.Fprintf(w, " %s\n", strings.Join(all, " "))
	}
	fmt.Fprintln(w, "\nratios are jobc/River and jobc/sql (the ceiling), the median of per-run ratios (each run measures both back to back);")
	fmt.Fprintln(w, "for rates higher is better for jobc, for latencies (ms) lower is better for jobc.")
}

func num(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// isCeiling reports whether sys is one of the hand-written SQL ceilings.
func isCeiling(sys string) bool { return sys == "sql" || sys == "sql-keep" }
