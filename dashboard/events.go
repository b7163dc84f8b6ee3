package dashboard

import (
	"fmt"
	"net/http"

	"github.com/jobc-dev/jobc/runtime/relay"
)

const (
	eventsRetryingShown = 20    // the retrying events the Events page lists, soonest due first
	eventsFailedShown   = 50    // the failed events it lists, newest first
	eventsBehindMax     = 10000 // how far it counts the events behind a retrying one
	maxEventIDs         = 1000  // the most failed events one Send again names
)

type eventsData struct {
	Stats     relay.Stats
	Retrying  []relay.RetryingEvent
	Failed    []relay.FailedEvent
	BehindMax int64
}

// events shows the outbox: how many events wait for the relays and how far behind they
// are, the events waiting to be sent again after a failed publication (each holding
// back the later events of its ordering key), and the events failed for good, with
// Send again.
func (h *handler) events(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	stats, err := relay.ReadStats(ctx, h.db)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	retrying, err := relay.ListRetrying(ctx, h.db, eventsRetryingShown, eventsBehindMax)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	failed, err := relay.ListFailed(ctx, h.db, eventsFailedShown)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if h.opt.HidePayloads {
		// An ordering key is made of payload values; what the page does not have, no
		// template change can show.
		for i := range retrying {
			retrying[i].OrderingKey = ""
		}
		for i := range failed {
			failed[i].OrderingKey = ""
		}
	}
	h.render(w, r, http.StatusOK, "events", "Events", true, eventsData{Stats: stats, Retrying: retrying, Failed: failed, BehindMax: eventsBehindMax})
}

// retryEvents makes failed events pending again: those the form's "id" fields name, or
// every failed event when it says all=yes.
func (h *handler) retryEvents(w http.ResponseWriter, r *http.Request) {
	all := r.PostFormValue("all") == "yes"
	var ids []int64
	for _, s := range r.PostForm["id"] {
		id, ok := h.id(w, r, "id", s)
		if !ok {
			return
		}
		ids = append(ids, id)
	}
	switch {
	case all && len(ids) > 0:
		h.problem(w, r, http.StatusBadRequest, "send again: either all=yes or ids, not both")
		return
	case !all && len(ids) == 0:
		h.problem(w, r, http.StatusBadRequest, "send again: name the failed events (id) or all=yes")
		return
	case len(ids) > maxEventIDs:
		h.problem(w, r, http.StatusBadRequest, fmt.Sprintf("send again: %d events named, at most %d at once", len(ids), maxEventIDs))
		return
	}
	n, err := relay.RetryFailed(r.Context(), h.db, ids)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.log.InfoContext(r.Context(), "jobc dashboard: sent failed events again", "all", all, "ids", len(ids), "changed", n)
	h.done(w, r, "/events", fmt.Sprintf("%d failed events are pending again; a relay sends them next.", n))
}
