package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/jobc-dev/jobc/runtime/internal/dberr"
	"github.com/jobc-dev/jobc/schema"
)

// GrantRoles names the roles that [ListGrants] and [ApplyGrants] give privileges to: a
// worker role (workers, and applications that enqueue and cancel), an optional
// producer role (enqueue only) and a read-only role (status, dashboards). The role
// that runs [Migrate] owns the tables and is not named. An empty field is skipped.
type GrantRoles = schema.Roles

// These statements read the system catalogs, not jobc's tables, and run once per
// `jobc migrate grants`; they are not part of the runtime's queries in queries/*.sql.
const (
	// findJobsTable resolves jobc_jobs through search_path, as every runtime
	// statement does, and says whether the current user may act as its owner.
	findJobsTable = `SELECT n.nspname, c.relowner::regrole::text, pg_has_role(current_user, c.relowner, 'USAGE')
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.oid = to_regclass('jobc_jobs')`
	missingRoles = `SELECT r FROM unnest($1::text[]) WITH ORDINALITY AS u(r, i)
WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = u.r) ORDER BY i`
	// withoutSchemaUsage finds roles that still cannot use the schema after the
	// grants: a migration role that does not own the schema grants USAGE on it with
	// a warning and no effect.
	withoutSchemaUsage = `SELECT r FROM unnest($1::text[]) WITH ORDINALITY AS u(r, i)
WHERE NOT has_schema_privilege(u.r, $2, 'USAGE') ORDER BY i`
)

// ListGrants returns the GRANT statements, one per line and each ending in ";", that give
// roles the privileges jobc's statements need on the jobc tables found through db's
// search_path (the schema [Migrate] created them in). Every named role must exist.
func ListGrants(ctx context.Context, db DBTX, roles GrantRoles) ([]string, error) {
	stmts, _, err := grants(ctx, db, roles)
	return stmts, err
}

// ApplyGrants runs the statements of [ListGrants] in one transaction and returns them. It
// must run as the owner of the jobc tables (the role that ran [Migrate]) or a
// superuser: PostgreSQL lets anyone else's GRANT succeed with a warning and no effect,
// so ApplyGrants refuses to start instead.
func ApplyGrants(ctx context.Context, db Beginner, roles GrantRoles) ([]string, error) {
	tx, err := db.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("jobc: grants: begin: %w", dberr.Describe(err))
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	stmts, own, err := grants(ctx, tx, roles)
	if err != nil {
		return nil, err
	}
	if !own.mayGrant {
		return nil, fmt.Errorf("jobc: grants: the current user cannot grant privileges on %s.jobc_jobs, owned by %s: run as that role (the one that ran `jobc migrate up`) or a superuser",
			pgx.Identifier{own.schema}.Sanitize(), own.owner)
	}
	for _, s := range stmts {
		if _, err := tx.Exec(ctx, s); err != nil {
			return nil, fmt.Errorf("jobc: grants: %s: %w", strings.TrimSuffix(s, ";"), dberr.Describe(err))
		}
	}
	rows, err := tx.Query(ctx, withoutSchemaUsage, roleNames(roles), own.schema)
	if err != nil {
		return nil, fmt.Errorf("jobc: grants: check schema usage: %w", dberr.Describe(err))
	}
	lacking, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("jobc: grants: check schema usage: %w", dberr.Describe(err))
	}
	if len(lacking) > 0 {
		s := pgx.Identifier{own.schema}.Sanitize()
		return nil, fmt.Errorf("jobc: grants: role %s cannot use schema %s, and the current user may not grant it: have the schema's owner run GRANT USAGE ON SCHEMA %s TO %s",
			quoteAll(lacking), s, s, quoteAll(lacking))
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("jobc: grants: commit: %w", dberr.Describe(err))
	}
	return stmts, nil
}

// ownership is where the jobc tables live and who may grant on them.
type ownership struct {
	schema   string
	owner    string
	mayGrant bool
}

func grants(ctx context.Context, db DBTX, roles GrantRoles) ([]string, ownership, error) {
	var own ownership
	err := db.QueryRow(ctx, findJobsTable).Scan(&own.schema, &own.owner, &own.mayGrant)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, own, errors.New("jobc: grants: table jobc_jobs is not on the search_path (or the current user may not use its schema): run `jobc migrate up` (or runtime.Migrate) first, with the same search_path, as the role that is to own the tables")
	}
	if err != nil {
		return nil, own, fmt.Errorf("jobc: grants: find the jobc tables: %w", dberr.Describe(err))
	}
	rows, err := db.Query(ctx, missingRoles, roleNames(roles))
	if err != nil {
		return nil, own, fmt.Errorf("jobc: grants: look up roles: %w", dberr.Describe(err))
	}
	missing, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, own, fmt.Errorf("jobc: grants: look up roles: %w", dberr.Describe(err))
	}
	if len(missing) > 0 {
		return nil, own, fmt.Errorf("jobc: grants: role %s does not exist: create it first (CREATE ROLE %s LOGIN)",
			quoteAll(missing), pgx.Identifier{missing[0]}.Sanitize())
	}
	stmts, err := schema.Grants(own.schema, roles)
	if err != nil {
		return nil, own, fmt.Errorf("jobc: %w", err)
	}
	return stmts, own, nil
}

// roleNames lists the roles named in roles.
func roleNames(roles GrantRoles) []string {
	var names []string
	for _, r := range []string{roles.Worker, roles.Producer, roles.ReadOnly} {
		if r != "" {
			names = append(names, r)
		}
	}
	return names
}

// quoteAll quotes each role name as an identifier and joins them.
func quoteAll(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = pgx.Identifier{n}.Sanitize()
	}
	return strings.Join(quoted, ", ")
}
