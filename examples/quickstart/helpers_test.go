package main

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/jobc-dev/jobc/examples/quickstart/internal/jobs"
	"github.com/jobc-dev/jobc/examples/quickstart/internal/jobs/jobstest"
	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/jobctest"
)

// jobc generate also writes package jobstest (internal/jobs/jobstest): one typed test
// helper per job type, named like its payload. It sees jobs with their payloads
// decoded as a worker decodes them, so a test reads fields, not JSON, and names no
// kind string. Only tests import it: the quickstart binary links neither it nor
// package testing.
func Example_typedTestHelpers() {
	pool, _, cleanup := pgtest.ExampleSchema("typed_test_helpers", setup)
	defer cleanup()
	ctx := context.Background()

	projectID, _, err := createProject(ctx, pool, "Apollo", "ada@example.com")
	if err != nil {
		panic(err)
	}
	found, err := jobstest.SendWelcomeEmail.Find(ctx, pool, jobctest.Queue("email"))
	if err != nil {
		panic(err)
	}
	for _, job := range found {
		p := job.Payload // a jobs.SendWelcomeEmail
		fmt.Println(job.Info.State, p.ProjectID == projectID, p.ProjectName, p.Email, p.SendTips == nil)
	}
	// Output:
	// available true Apollo ada@example.com true
}

// TestWelcomeEmailWithTypedHelpers is how an application's test uses the helpers:
// assert what a transaction enqueued, before it commits, and run the real handler on
// one job in a transaction that rolls back when the test ends.
func TestWelcomeEmailWithTypedHelpers(t *testing.T) {
	pool := pgtest.NewSchema(t, setup)
	ctx := t.Context()

	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if _, err := jobs.EnqueueSendWelcomeEmail(ctx, tx, jobs.SendWelcomeEmailV1{ProjectID: 7, ProjectName: "Gemini", Email: "grace@example.com"}); err != nil {
		t.Fatal(err)
	}
	job := jobstest.SendWelcomeEmail.RequireEnqueued(t, tx, jobctest.Queue("email"), jobctest.Priority(3))
	if job.Payload.ProjectID != 7 || job.Payload.Email != "grace@example.com" {
		t.Errorf("enqueued payload %+v", job.Payload)
	}
	jobstest.SendWelcomeEmail.RequireNotEnqueued(t, pool) // the transaction has not committed

	mailer := &fakeMailer{sent: make(chan email, 1)}
	if _, err := jobstest.SendWelcomeEmail.Run(t, pool, &handlers{mailer: mailer}, jobs.SendWelcomeEmailV1{
		ProjectID: 8, ProjectName: "Artemis", Email: "katherine@example.com",
	}); err != nil {
		t.Fatalf("the handler failed: %v", err)
	}
	if m := <-mailer.sent; m.to != "katherine@example.com" || m.subject != "Welcome to Artemis" || m.idempotencyKey == "" {
		t.Errorf("the handler sent %+v", m)
	}
	jobstest.SendWelcomeEmail.RequireNotEnqueued(t, pool) // Run's job is in its own transaction
}

// TestTheBinaryLinksNoTestHelpers: the generated helpers live in a package of their
// own so that the application's binary does not link them, nor package testing.
func TestTheBinaryLinksNoTestHelpers(t *testing.T) {
	out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "testing" || strings.HasSuffix(pkg, "/jobctest") || strings.HasSuffix(pkg, "/jobstest") {
			t.Errorf("the quickstart binary imports %s", pkg)
		}
	}
}
