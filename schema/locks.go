package schema

import (
	"fmt"
	"regexp"
	"strings"
)

// A migration runs while workers claim and finish jobs. The statements below take a
// lock that stops those workers for as long as the statement reads or rewrites a
// table, which on a table with millions of rows is seconds to minutes: a build of an
// index under SHARE, a constraint checked or a column rewritten under ACCESS EXCLUSIVE.
// Each has a form that holds its strong lock only for a catalog change, and the rule
// says which. TestMigrationsHoldNoLongLocks applies the rules to every migration after
// the baseline (which creates its tables empty), and testdata/locks holds a case of
// each, good and bad, as the spec.
//
// A statement that needs no transaction (CREATE INDEX CONCURRENTLY, a CALL of a
// procedure that commits a batch at a time) goes in a migration whose first line is
// NoTransaction; the migrator then runs its statements one at a time, each under the
// lock timeout, and records the migration after the last. Such a migration may stop
// half-way and is run again from its start, so each of its statements must be
// re-runnable (IF NOT EXISTS, a backfill that skips what it filled).

// NoTransaction is the first line of a migration whose statements run one at a time,
// outside a transaction.
const NoTransaction = "-- jobc:no-transaction"

// OutsideTransaction says whether m's first line is NoTransaction.
func (m Migration) OutsideTransaction() bool {
	return strings.HasPrefix(strings.TrimSpace(m.SQL), NoTransaction)
}

// Statement is one statement of a migration and the line it starts on.
type Statement struct {
	Line int
	SQL  string // without comments, whitespace collapsed, no trailing ";"
}

// Statements splits sql into its statements: at each ";" outside a quoted string, a
// quoted identifier, a dollar-quoted body and a comment. Comments are dropped.
func Statements(sql string) []Statement {
	var out []Statement
	var cur strings.Builder
	line, start := 1, 0
	flush := func() {
		s := strings.Join(strings.Fields(cur.String()), " ")
		if s != "" {
			out = append(out, Statement{Line: start, SQL: s})
		}
		cur.Reset()
		start = 0
	}
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == '\n':
			line++
			cur.WriteByte(' ')
			i++
		case strings.HasPrefix(sql[i:], "--"):
			for i < len(sql) && sql[i] != '\n' {
				i++
			}
		case strings.HasPrefix(sql[i:], "/*"):
			end := strings.Index(sql[i+2:], "*/")
			if end < 0 {
				end = len(sql) - i - 4
			}
			line += strings.Count(sql[i:i+4+end], "\n")
			i += end + 4
			cur.WriteByte(' ')
		case c == ';':
			flush()
			i++
		default:
			if start == 0 && c != ' ' && c != '\t' && c != '\r' {
				start = line
			}
			n := quotedLen(sql[i:])
			line += strings.Count(sql[i:i+n], "\n")
			cur.WriteString(sql[i : i+n])
			i += n
		}
	}
	flush()
	return out
}

var dollarTag = regexp.MustCompile(`^\$([A-Za-z_][A-Za-z0-9_]*)?\$`)

// quotedLen is the length of the quoted string, identifier or dollar-quoted body at
// the start of s, or 1 if s starts with anything else.
func quotedLen(s string) int {
	if tag := dollarTag.FindString(s); tag != "" {
		if end := strings.Index(s[len(tag):], tag); end >= 0 {
			return len(tag) + end + len(tag)
		}
		return len(s)
	}
	if s[0] != '\'' && s[0] != '"' {
		return 1
	}
	for i := 1; i < len(s); i++ {
		if s[i] == s[0] {
			if i+1 < len(s) && s[i+1] == s[0] { // a doubled quote
				i++
				continue
			}
			return i + 1
		}
	}
	return len(s)
}

// LongLock is a statement of a migration that would hold a lock stopping workers for
// as long as it reads or rewrites a table, with what to write instead.
type LongLock struct {
	Line      int
	Statement string
	Why       string
}

func (l LongLock) String() string {
	s := l.Statement
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return fmt.Sprintf("line %d: %s: %s", l.Line, s, l.Why)
}

// The big tables: an UPDATE or DELETE of one of them in a migration rewrites rows by
// the million in one transaction.
var bigTables = regexp.MustCompile(`(?i)^(jobc_jobs|jobc_jobs_finished\w*|jobc_events|jobc_workflow_steps|jobc_workflow_items)$`)

var (
	createTable    = regexp.MustCompile(`(?i)^CREATE\s+(?:UNLOGGED\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?("?[\w.]+"?)`)
	createIndex    = regexp.MustCompile(`(?i)^CREATE\s+(?:UNIQUE\s+)?INDEX\s+(CONCURRENTLY\s+)?(IF\s+NOT\s+EXISTS\s+)?(?:("?[\w.]+"?)\s+)?ON\s+(ONLY\s+)?("?[\w.]+"?)`)
	alterTable     = regexp.MustCompile(`(?i)^ALTER\s+TABLE\s+(?:IF\s+EXISTS\s+)?(?:ONLY\s+)?("?[\w.]+"?)\s+(.*)$`)
	addConstraint  = regexp.MustCompile(`(?i)\bADD\s+(?:CONSTRAINT\s+\S+\s+)?(CHECK|FOREIGN\s+KEY|PRIMARY\s+KEY|UNIQUE|EXCLUDE)\b`)
	notValid       = regexp.MustCompile(`(?i)\bNOT\s+VALID\b`)
	usingIndex     = regexp.MustCompile(`(?i)\bUSING\s+INDEX\b`)
	addColumn      = regexp.MustCompile(`(?i)\bADD\s+(?:COLUMN\s+)?(?:IF\s+NOT\s+EXISTS\s+)?(\w+)\s+\w`)
	storedColumn   = regexp.MustCompile(`(?i)\bGENERATED\s+ALWAYS\s+AS\s*\(.*\)\s*STORED\b`)
	volatileDflt   = regexp.MustCompile(`(?i)\bDEFAULT\s+[^,]*\b(clock_timestamp|random|gen_random_uuid|uuid_generate_v\d|nextval|timeofday)\s*\(`)
	columnType     = regexp.MustCompile(`(?i)\bALTER\s+(?:COLUMN\s+)?\S+\s+(?:SET\s+DATA\s+)?TYPE\b`)
	setNotNull     = regexp.MustCompile(`(?i)\bALTER\s+(?:COLUMN\s+)?\S+\s+SET\s+NOT\s+NULL\b`)
	rewriteTable   = regexp.MustCompile(`(?i)^(VACUUM\s*\([^)]*\bFULL\b|VACUUM\s+FULL\b|CLUSTER\b|LOCK\b)`)
	reindex        = regexp.MustCompile(`(?i)^REINDEX\b`)
	updateOrDelete = regexp.MustCompile(`(?i)^(?:WITH\b.*?\)\s*)?(UPDATE\s+(?:ONLY\s+)?|DELETE\s+FROM\s+(?:ONLY\s+)?)("?[\w.]+"?)`)
	concurrently   = regexp.MustCompile(`(?i)\bCONCURRENTLY\b`)
	callStatement  = regexp.MustCompile(`(?i)^CALL\b`)
)

// ConcurrentIndex returns the name of the index s builds with CREATE INDEX
// CONCURRENTLY, if it builds one with a name: a failed build leaves that index behind,
// invalid, and the migrator drops it before it runs s again.
func (s Statement) ConcurrentIndex() (string, bool) {
	c := createIndex.FindStringSubmatch(s.SQL)
	if c == nil || c[1] == "" || c[3] == "" {
		return "", false
	}
	return c[3], true
}

// LongLocks returns the statements of m that would hold a lock stopping workers while
// they read or rewrite a table that existed before m (a table m creates is empty and
// unseen, so anything goes on it), and those that cannot run where m runs them.
func LongLocks(m Migration) []LongLock {
	noTx := m.OutsideTransaction()
	created := map[string]bool{}
	var out []LongLock
	flag := func(s Statement, why string) {
		out = append(out, LongLock{Line: s.Line, Statement: s.SQL, Why: why})
	}
	for _, s := range Statements(m.SQL) {
		if c := createTable.FindStringSubmatch(s.SQL); c != nil {
			created[tableName(c[1])] = true
			continue
		}
		if c := createIndex.FindStringSubmatch(s.SQL); c != nil {
			table := tableName(c[5])
			switch {
			case created[table]:
			case c[4] != "": // ON ONLY a partitioned table: an invalid index, no build
			case c[1] == "":
				flag(s, "builds the index under a SHARE lock on "+table+", which stops every write to it: "+
					"CREATE INDEX CONCURRENTLY IF NOT EXISTS, in a migration marked "+NoTransaction)
			case c[2] == "":
				flag(s, "a "+NoTransaction+" migration is run again from its start after a failure: CREATE INDEX CONCURRENTLY IF NOT EXISTS")
			}
		}
		if concurrently.MatchString(s.SQL) && !noTx {
			flag(s, "CONCURRENTLY cannot run in a transaction: put it in a migration whose first line is "+NoTransaction)
		}
		if callStatement.MatchString(s.SQL) && !noTx {
			flag(s, "a procedure that commits its batches cannot in a transaction: put the CALL in a migration whose first line is "+NoTransaction)
		}
		if c := alterTable.FindStringSubmatch(s.SQL); c != nil && !created[tableName(c[1])] {
			table, rest := tableName(c[1]), c[2]
			if addConstraint.MatchString(rest) && !notValid.MatchString(rest) && !usingIndex.MatchString(rest) {
				flag(s, "checks every row of "+table+" under ACCESS EXCLUSIVE: add the constraint NOT VALID, "+
					"then VALIDATE CONSTRAINT in a statement of its own (SHARE UPDATE EXCLUSIVE: writes go on); "+
					"a unique or primary key: CREATE UNIQUE INDEX CONCURRENTLY, then ADD CONSTRAINT ... USING INDEX")
			}
			if isAddColumn(rest) && (storedColumn.MatchString(rest) || volatileDflt.MatchString(rest)) {
				flag(s, "rewrites every row of "+table+" under ACCESS EXCLUSIVE: add the column without its "+
					"expression or volatile default, then fill it in batches (a procedure that commits each, "+
					"CALLed from a "+NoTransaction+" migration)")
			}
			if columnType.MatchString(rest) {
				flag(s, "rewrites every row of "+table+" under ACCESS EXCLUSIVE: add a column of the new type and fill it in batches")
			}
			if setNotNull.MatchString(rest) {
				flag(s, "reads every row of "+table+" under ACCESS EXCLUSIVE: first add CHECK (column IS NOT NULL) NOT VALID "+
					"and VALIDATE it, which SET NOT NULL then trusts")
			}
		}
		if rewriteTable.MatchString(s.SQL) || (reindex.MatchString(s.SQL) && !concurrently.MatchString(s.SQL)) {
			flag(s, "holds ACCESS EXCLUSIVE for the whole statement: use the CONCURRENTLY form, or leave it to an operator")
		}
		if c := updateOrDelete.FindStringSubmatch(s.SQL); c != nil && bigTables.MatchString(tableName(c[2])) && !created[tableName(c[2])] {
			flag(s, "changes every matching row of "+tableName(c[2])+" in one transaction: do it in batches, "+
				"in a procedure that commits each, CALLed from a "+NoTransaction+" migration")
		}
	}
	return out
}

// isAddColumn says whether an ALTER TABLE's actions add a column (ADD COLUMN, or ADD
// followed by a name that is not a constraint's keyword).
func isAddColumn(actions string) bool {
	for _, m := range addColumn.FindAllStringSubmatch(actions, -1) {
		switch strings.ToUpper(m[1]) {
		case "CONSTRAINT", "CHECK", "FOREIGN", "PRIMARY", "UNIQUE", "EXCLUDE":
		default:
			return true
		}
	}
	return false
}

// tableName is a table's name without its schema and quotes.
func tableName(s string) string {
	s = strings.Trim(s, `"`)
	if i := strings.LastIndexByte(s, '.'); i >= 0 {
		s = strings.Trim(s[i+1:], `"`)
	}
	return strings.ToLower(s)
}
