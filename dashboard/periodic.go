package dashboard

import (
	"net/http"
	"time"

	"github.com/jobc-dev/jobc/runtime"
)

type periodicData struct {
	Jobs    []runtime.PeriodicJob
	NoTypes bool // no job types were given to the dashboard
}

func (h *handler) periodic(w http.ResponseWriter, r *http.Request) {
	ps, err := runtime.ListPeriodicJobs(r.Context(), h.db, h.opt.JobTypes, time.Now())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.render(w, r, http.StatusOK, "periodic", "Periodic jobs", false, periodicData{Jobs: ps, NoTypes: len(h.opt.JobTypes) == 0})
}
