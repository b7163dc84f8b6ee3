package dashboard_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/jobc-dev/jobc/dashboard"
	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

// ExampleNew mounts the dashboard in an application's mux under /jobs/, read-only,
// with the application's job types for the Periodic page. (An application would pass
// its generated jobs.JobTypes() and put the route behind its own authentication.)
func ExampleNew() {
	pool, _, cleanup := pgtest.ExampleSchema("dashboard", migrated)
	defer cleanup()
	if _, err := runtime.Enqueue(context.Background(), pool, emailType, map[string]string{"to": "ada@example.com"}); err != nil {
		panic(err)
	}

	h, err := dashboard.New(pool, dashboard.Options{
		Prefix:   "/jobs/",
		ReadOnly: true,
		JobTypes: []*runtime.JobType{emailType},
	})
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/jobs/", h)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	res, err := http.Get(srv.URL + "/jobs/queues")
	if err != nil {
		panic(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Status)
	fmt.Println("lists queue email:", strings.Contains(string(body), `href="/jobs/jobs?queue=email"`))
	fmt.Println("offers a mutation:", strings.Contains(string(body), `method="post"`))
	// Output:
	// 200 OK
	// lists queue email: true
	// offers a mutation: false
}
