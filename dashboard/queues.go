package dashboard

import "net/http"

type queuesData struct {
	Queues []queueRow
}

func (h *handler) queues(w http.ResponseWriter, r *http.Request) {
	qs, err := h.queueRows(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.render(w, r, http.StatusOK, "queues", "Queues", true, queuesData{Queues: qs})
}
