package dashboard

import (
	"net/http"

	"github.com/jobc-dev/jobc/runtime"
)

// failedGroupsShown is how many groups the Failed page lists.
const failedGroupsShown = 200

type failedData struct {
	Groups []runtime.FailedGroup
}

func (h *handler) failed(w http.ResponseWriter, r *http.Request) {
	gs, err := runtime.ListFailedGroups(r.Context(), h.db, failedGroupsShown)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.render(w, r, http.StatusOK, "failed", "Failed", false, failedData{Groups: gs})
}
