package dashboard

import (
	"fmt"
	"net/http"

	"github.com/jobc-dev/jobc/runtime"
)

type versionsData struct {
	Counts  []runtime.VersionCount
	Workers []runtime.WorkerInfo
	// Banner says how many unfinished jobs no live worker takes, and in how many of
	// the rows below; "" when every job has a decoder.
	Banner string
}

func (h *handler) versions(w http.ResponseWriter, r *http.Request) {
	vs, err := runtime.CountUnfinishedByVersion(r.Context(), h.db, 0)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	ws, err := runtime.ListWorkers(r.Context(), h.db, 0)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	d := versionsData{Counts: vs, Workers: ws}
	var jobs, rows int64
	for _, v := range vs {
		if len(v.Decoders) == 0 {
			jobs += v.Jobs
			rows++
		}
	}
	d.Banner = undecodableBanner(jobs, rows)
	h.render(w, r, http.StatusOK, "versions", "Versions", true, d)
}

// undecodableBanner is the Versions page's warning about the given number of
// unfinished jobs, in that many rows of its table, that no live worker takes; "" when
// there are none.
func undecodableBanner(jobs, rows int64) string {
	if jobs == 0 {
		return ""
	}
	where, verb := "the row marked below", "says"
	if rows != 1 {
		where, verb = fmt.Sprintf("the %d rows marked below", rows), "say"
	}
	return fmt.Sprintf("No live worker can take %s: %s %s why.", plural(jobs, "unfinished job", "unfinished jobs"), where, verb)
}
