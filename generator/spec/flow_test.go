package spec

import (
	"reflect"
	"testing"
	"time"
)

// TestFlowModel: the forms of flow control load into the Flow the runtime gets. A
// plain concurrency and {limit} mean the same; a by field may be a $ref to a scalar
// schema or an enum, in every version; a queue's limits reach each job that runs in
// it, by queue: or by defaults.queue, as one Flow.
func TestFlowModel(t *testing.T) {
	cfg := `version: 1
package: jobs
out: jobs
defaults: {queue: partners}
queues:
  partners: {concurrency: {limit: 50}, rate: {limit: 1000, per: 1s}}
  reports: {concurrency: 1}
jobs:
  call_partner_api:
    rate: {by: [account_id, region], limit: 100, per: 1m}
    fairness: {by: [account_id, region]}
    payload:
      versions:
        1:
          schema:
            type: object
            $defs: {account: {type: string, minLength: 1}}
            required: [account_id, region]
            properties:
              account_id: {$ref: "#/$defs/account"}
              region: {enum: [eu, us]}
        2:
          schema:
            type: object
            required: [account_id, region]
            properties:
              account_id: {type: string}
              region: {type: string}
  nightly_report:
    queue: reports
    concurrency: {limit: 4}
    payload: {versions: {1: {schema: {type: object}}}}
  plain:
    queue: other
    concurrency: 4
    payload: {versions: {1: {schema: {type: object}}}}
`
	p, err := Load(writeProject(t, map[string]string{"jobc.yaml": cfg}))
	if err != nil {
		t.Fatal(err)
	}
	partners := Flow{Concurrency: 50, Rate: Rate{Limit: 1000, Per: time.Second}}
	want := map[string]struct{ flow, queue *Flow }{
		"call_partner_api": {&Flow{By: []string{"account_id", "region"}, Rate: Rate{Limit: 100, Per: time.Minute}, Fair: true}, &partners},
		"nightly_report":   {&Flow{Concurrency: 4}, &Flow{Concurrency: 1}},
		"plain":            {&Flow{Concurrency: 4}, nil},
	}
	for _, j := range p.Jobs {
		w := want[j.Kind]
		if got := withoutPos(j.Flow); !reflect.DeepEqual(got, w.flow) {
			t.Errorf("%s: Flow %+v, want %+v", j.Kind, got, w.flow)
		}
		if got := withoutPos(j.QueueFlow); !reflect.DeepEqual(got, w.queue) {
			t.Errorf("%s: QueueFlow %+v, want %+v", j.Kind, got, w.queue)
		}
	}
	if f := p.Job("call_partner_api").Flow; f.ByPath != "jobs.call_partner_api.rate.by" || f.ByPos.Line != 10 {
		t.Errorf("by at %s %s, want the rate's, line 10", f.ByPos, f.ByPath)
	}
}

// withoutPos is f without its positions.
func withoutPos(f *Flow) *Flow {
	if f == nil {
		return nil
	}
	c := *f
	c.Pos, c.ByPos, c.ByPath, c.byPos = Pos{}, Pos{}, "", nil
	return &c
}
