package runtime_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

// ExampleApplyGrants gives a worker role and a read-only role what they need on the
// tables the migration role owns; the read-only role then cannot delete a job.
func ExampleApplyGrants() {
	pool, _, cleanup := pgtest.ExampleSchema("grants", migrated)
	defer cleanup()
	ctx := context.Background()

	// Roles are cluster-wide: an application creates them once, outside jobc. These
	// get unique names, so that examples running at once do not share them.
	var b [4]byte
	_, _ = rand.Read(b[:])
	worker, dashboard := "app_worker_"+hex.EncodeToString(b[:]), "dashboard_"+hex.EncodeToString(b[:])
	for _, r := range []string{worker, dashboard} {
		if _, err := pool.Exec(ctx, "CREATE ROLE "+pgx.Identifier{r}.Sanitize()); err != nil {
			panic(err)
		}
		defer func() {
			for _, s := range []string{"DROP OWNED BY ", "DROP ROLE "} {
				if _, err := pool.Exec(ctx, s+pgx.Identifier{r}.Sanitize()); err != nil {
					fmt.Println(err) // fails the example
				}
			}
		}()
	}
	readable := strings.NewReplacer(worker, "app_worker", dashboard, "dashboard", pgtest.SchemaOf(pool), "jobs")

	stmts, err := runtime.ApplyGrants(ctx, pool, runtime.GrantRoles{Worker: worker, ReadOnly: dashboard})
	if err != nil {
		panic(err)
	}
	for _, s := range stmts {
		if strings.Contains(s, `."jobc_jobs" `) {
			fmt.Println(readable.Replace(s))
		}
	}

	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL ROLE "+pgx.Identifier{dashboard}.Sanitize()); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "DELETE FROM jobc_jobs")
		return err
	})
	fmt.Println(err)
	// Output:
	// GRANT SELECT, INSERT (kind, queue, state, priority, payload_version, payload, metadata, available_at, max_attempts, flow_key), UPDATE, DELETE ON TABLE "jobs"."jobc_jobs" TO "app_worker";
	// GRANT SELECT ON TABLE "jobs"."jobc_jobs" TO "dashboard";
	// ERROR: permission denied for table jobc_jobs (SQLSTATE 42501)
}
