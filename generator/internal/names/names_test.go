package names_test

import (
	"strings"
	"testing"

	"github.com/jobc-dev/jobc/generator/internal/names"
	"github.com/jobc-dev/jobc/generator/spec"
)

func TestCollisionsNameBothJobsAndPositions(t *testing.T) {
	ping := &spec.Job{Kind: "ping", Pos: spec.Pos{File: "jobc.yaml", Line: 5, Col: 3}}
	many := &spec.Job{Kind: "ping_many", Pos: spec.Pos{File: "jobs/more.yaml", Line: 2, Col: 3}}
	ids := names.CatalogueOwned()
	ids = append(ids, names.JobOwned(ping, names.ForKind(ping.Kind).Idents(nil))...)
	ids = append(ids, names.JobOwned(many, names.ForKind(many.Kind).Idents(nil))...)
	ds := names.Collisions(ids)
	if len(ds) != 1 {
		t.Fatalf("want one collision (EnqueuePingMany), got %d:\n%v", len(ds), ds)
	}
	got := ds[0].String()
	for _, want := range []string{"jobs/more.yaml:2:3: jobs.ping_many:", "EnqueuePingMany", "job ping", "jobc.yaml:5:3"} {
		if !strings.Contains(got, want) {
			t.Errorf("diagnostic %q does not contain %q", got, want)
		}
	}
}

func TestCollisionsWithTheCatalogue(t *testing.T) {
	for _, kind := range []string{"handlers", "register", "job_types"} {
		j := &spec.Job{Kind: kind, Pos: spec.Pos{File: "jobc.yaml", Line: 9, Col: 3}}
		ids := append(names.CatalogueOwned(), names.JobOwned(j, names.ForKind(kind).Idents(nil))...)
		ds := names.Collisions(ids)
		if len(ds) != 1 || !strings.Contains(ds[0].Message, "catalogue") {
			t.Errorf("job %s: want one collision with the catalogue, got %v", kind, ds)
		}
	}
}

func TestNoCollisionsBetweenDistinctJobs(t *testing.T) {
	ids := names.CatalogueOwned()
	for i, kind := range []string{"send_email", "send_sms", "ping", "pong", "charge_card"} {
		j := &spec.Job{Kind: kind, Pos: spec.Pos{File: "jobc.yaml", Line: i + 1, Col: 3}}
		vs := []names.Version{{Number: 1}, {Number: 2, HandWritten: true}}
		ids = append(ids, names.JobOwned(j, names.ForKind(kind).Idents(vs))...)
	}
	if ds := names.Collisions(ids); len(ds) != 0 {
		t.Errorf("unexpected collisions:\n%v", ds)
	}
}

func TestMethodCollisions(t *testing.T) {
	j := &spec.Job{Kind: "sync", Pos: spec.Pos{File: "jobc.yaml", Line: 3, Col: 3}}
	classes := []*spec.ErrorClass{
		{Name: "x_1", Pos: spec.Pos{File: "jobc.yaml", Line: 10, Col: 3}},
		{Name: "x1", Pos: spec.Pos{File: "jobc.yaml", Line: 11, Col: 3}},
		{Name: "id", Pos: spec.Pos{File: "jobc.yaml", Line: 12, Col: 3}},
		{Name: "transient", Pos: spec.Pos{File: "jobc.yaml", Line: 13, Col: 3}},
	}
	ds := names.ForKind(j.Kind).MethodCollisions(j, classes)
	got := ds.Error()
	if len(ds) != 2 || !strings.Contains(got, `"x_1" and "x1" both become method X1 of SyncJob`) ||
		!strings.Contains(got, `error class "id" would become method ID`) {
		t.Errorf("want the x_1/x1 clash and the id shadowing, got:\n%s", got)
	}
}

func TestCollisionsOfEqualBaseNamesAreOneReport(t *testing.T) {
	a := &spec.Job{Kind: "x1", Pos: spec.Pos{File: "jobc.yaml", Line: 5, Col: 3}}
	b := &spec.Job{Kind: "x_1", Pos: spec.Pos{File: "jobc.yaml", Line: 9, Col: 3}}
	vs := []names.Version{{Number: 1}}
	ids := names.CatalogueOwned()
	ids = append(ids, names.JobOwned(a, names.ForKind(a.Kind).Idents(vs))...)
	ids = append(ids, names.JobOwned(b, names.ForKind(b.Kind).Idents(vs))...)
	ds := names.Collisions(ids)
	if len(ds) != 1 {
		t.Fatalf("want one report for x1/x_1, got %d:\n%v", len(ds), ds)
	}
	// Every one of the 9 names of x_1 (8 fixed, 1 version struct) is also one of x1's.
	if want := "generated name KindX1, the kind constant, is also the kind constant of job x1 (declared at jobc.yaml:5:3), and 8 more names collide: rename one of the jobs"; ds[0].Message != want {
		t.Errorf("got  %s\nwant %s", ds[0].Message, want)
	}
}
