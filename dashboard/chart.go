package dashboard

import (
	"fmt"
	"html/template"
	"strings"

	"github.com/jobc-dev/jobc/runtime"
)

// chart draws a queue's throughput as a small inline SVG: one bar per bucket, completed
// stacked under failed. The markup is built from numbers only, never from names or
// messages, so marking it as safe HTML cannot let a hostile string in.
func chart(t runtime.Throughput) template.HTML {
	const w, h = 240.0, 40.0
	n := len(t.Completed)
	if n == 0 {
		return ""
	}
	var peak int64 = 1
	for i := range n {
		peak = max(peak, t.Completed[i]+t.Failed[i]+t.Cancelled[i])
	}
	bw := w / float64(n)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %g %g" preserveAspectRatio="none" role="img" aria-label="jobs finished per %s over the last hour">`, w, h, humanDuration(t.Bucket))
	for i := range n {
		x := float64(i) * bw
		ok := float64(t.Completed[i]) / float64(peak) * h
		bad := float64(t.Failed[i]+t.Cancelled[i]) / float64(peak) * h
		if ok > 0 {
			fmt.Fprintf(&b, `<rect class="ok" x="%.2f" y="%.2f" width="%.2f" height="%.2f"><title>%d completed</title></rect>`, x, h-ok, bw*0.85, ok, t.Completed[i])
		}
		if bad > 0 {
			fmt.Fprintf(&b, `<rect class="bad" x="%.2f" y="%.2f" width="%.2f" height="%.2f"><title>%d failed or cancelled</title></rect>`, x, h-ok-bad, bw*0.85, bad, t.Failed[i]+t.Cancelled[i])
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) //nolint:gosec // built from numbers only, see above
}
