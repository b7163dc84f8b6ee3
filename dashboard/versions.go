package dashboard

import (
	"net/http"

	"github.com/jobc-dev/jobc/runtime"
)

type versionsData struct {
	Counts      []runtime.VersionCount
	Undecodable int64 // unfinished jobs no live worker takes
	Workers     []runtime.WorkerInfo
}

func (h *handler) versions(w http.ResponseWriter, r *http.Request) {
	vs, err := runtime.UnfinishedByVersion(r.Context(), h.db, 0)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	ws, err := runtime.Workers(r.Context(), h.db, 0)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	d := versionsData{Counts: vs, Workers: ws}
	for _, v := range vs {
		if len(v.Decoders) == 0 {
			d.Undecodable += v.Jobs
		}
	}
	h.render(w, r, http.StatusOK, "versions", "Versions", true, d)
}
