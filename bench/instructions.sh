#!/bin/bash
# instructions.sh counts the CPU instructions PostgreSQL runs for one execution of a
# prepared statement, in a freshly migrated jobc schema: a count that does not move with
# the machine's load, where timings on a shared machine vary by 20% from run to run.
#
#   bench/instructions.sh 'PREPARE s(int) AS SELECT ...;' 'EXECUTE s(1);' [patch.sql ...]
#
# It builds a throwaway cluster (initdb, in a temporary directory), applies the schema
# (`jobc migrate sql`) and each patch file, then runs a single-user backend under
# valgrind's callgrind twice, with the PREPARE line followed by N and by 3N EXECUTE lines
# (each its own transaction, as a statement of the business's own is), and prints the
# difference divided by 2N: the cost of one execution and its commit, without the
# backend's start and the statement's planning. Needs valgrind and PostgreSQL's
# binaries (PGBIN, default the newest /usr/lib/postgresql/*/bin); run as root, it runs
# the cluster as user postgres. N is 100 unless INSTRUCTIONS_N says otherwise. Set
# CALLGRIND_OUT to keep the 3N run's profile (callgrind_annotate --inclusive=yes reads it).
#
# The backend runs with PostgreSQL's default settings, as a producer's connection does.
# A statement the worker sends runs on connections that plan generically and never scan
# jobc_jobs sequentially (runtime/worker.go), so measure it with those settings before
# the PREPARE: with the defaults, jobc_finish's statements are planned again at each call
# of one job (0.92M of its 1.85M instructions; 698k so).
#
#   bench/instructions.sh "SET plan_cache_mode = force_generic_plan; SET enable_seqscan = off; $(cat finish-1.prepare.sql)" ...
set -euo pipefail
if [ $# -lt 2 ]; then
	echo "usage: $0 'PREPARE ...;' 'EXECUTE ...;' [patch.sql ...]" >&2
	exit 2
fi
prepare=$1 execute=$2
shift 2
n=${INSTRUCTIONS_N:-100}
pgbin=${PGBIN:-$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)}
here=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
chmod 755 "$dir"
as=()
if [ "$(id -u)" = 0 ]; then
	chown postgres "$dir"
	as=(runuser -u postgres --)
fi
"${as[@]}" "$pgbin/initdb" -D "$dir/data" -A trust -U postgres >/dev/null
"${as[@]}" "$pgbin/pg_ctl" -D "$dir/data" -o "-p 5499 -k $dir -c listen_addresses=''" -l "$dir/log" -w start >/dev/null
(cd "$here/cmd/jobc" && go run . migrate sql) >"$dir/schema.sql"
PGOPTIONS="-c client_min_messages=warning" psql -h "$dir" -p 5499 -U postgres -d postgres -q -v ON_ERROR_STOP=1 -f "$dir/schema.sql" >/dev/null
for patch in "$@"; do
	PGOPTIONS="-c client_min_messages=warning" psql -h "$dir" -p 5499 -U postgres -d postgres -q -v ON_ERROR_STOP=1 -f "$patch" >/dev/null
done
"${as[@]}" "$pgbin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null

count() { # count N: instructions of the backend running PREPARE and N EXECUTEs
	{ echo "$prepare"; yes "$execute" | head -n "$1"; } >"$dir/in.sql"
	chmod 644 "$dir/in.sql"
	"${as[@]}" valgrind --tool=callgrind --callgrind-out-file="$dir/cg.out" \
		"$pgbin/postgres" --single -D "$dir/data" postgres <"$dir/in.sql" >"$dir/out.txt" 2>"$dir/err.txt"
	if grep -q 'ERROR:' "$dir/err.txt"; then
		grep -m1 -A2 'ERROR:' "$dir/err.txt" >&2
		exit 1
	fi
	awk '/^(summary|totals):/ {print $2; exit}' "$dir/cg.out"
}
# Both runs start from the database as the patches left it: the first run's writes
# (jobs finished, rows moved) would otherwise be the second's starting point, and a
# statement that consumes what the setup made (finish-250 with N=5 ends 1,250 of the
# setup's jobs, then 3,750) would run out of it.
cp -a "$dir/data" "$dir/data.orig"
a=$(count "$n")
rm -rf "$dir/data" && mv "$dir/data.orig" "$dir/data"
b=$(count $((3 * n)))
if [ -n "${CALLGRIND_OUT:-}" ]; then
	cp "$dir/cg.out" "$CALLGRIND_OUT"
fi
[ -n "${INSTRUCTIONS_VERBOSE:-}" ] && echo "N: $a, 3N: $b" >&2
echo $(((b - a) / (2 * n)))
