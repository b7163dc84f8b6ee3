package generator_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/runtime"
	"github.com/jobc-dev/jobc/testdata/flow_control/jobs"
)

// TestGeneratedFlowControl: the job types generated from testdata/flow_control carry
// the spec's flow control, a job's own as Flow and its queue's as QueueFlow, with the
// fields the spec leaves out zero; and the runtime accepts them (MustJobType panics
// when this package is initialised otherwise).
func TestGeneratedFlowControl(t *testing.T) {
	partners := &runtime.Flow{Concurrency: 50, Rate: runtime.Rate{Limit: 1000, Per: time.Second}}
	want := map[string]struct{ flow, queue *runtime.Flow }{
		jobs.KindCallPartnerAPI: {
			&runtime.Flow{By: []string{"account_id"}, Concurrency: 2, Rate: runtime.Rate{Limit: 100, Per: time.Minute}, Fair: true},
			partners,
		},
		jobs.KindPostLedgerEntry:    {&runtime.Flow{By: []string{"ledger_id"}, Sequence: true}, nil},
		jobs.KindRebuildSearchIndex: {&runtime.Flow{Concurrency: 3}, nil},
		jobs.KindSyncPartnerCatalog: {nil, partners},
	}
	types := jobs.JobTypes()
	if len(types) != len(want) {
		t.Fatalf("%d job types, want %d", len(types), len(want))
	}
	for _, jt := range types {
		w := want[jt.Kind]
		if !reflect.DeepEqual(jt.Flow, w.flow) {
			t.Errorf("%s: Flow %+v, want %+v", jt.Kind, jt.Flow, w.flow)
		}
		if !reflect.DeepEqual(jt.QueueFlow, w.queue) {
			t.Errorf("%s: QueueFlow %+v, want %+v", jt.Kind, jt.QueueFlow, w.queue)
		}
	}
}
