#!/bin/bash
# every $1 seconds, VACUUM jobc_jobs in the longhaul database, logging how long it took
every=${1:-5}; opts=${2:-"SKIP_LOCKED"}
while true; do
  db=$(psql -h 127.0.0.1 -p 5444 -U postgres -tA -c "select datname from pg_database where datname like 'bench_longhaul%' limit 1")
  if [ -n "$db" ]; then
    s=$(date +%s.%N)
    psql -h 127.0.0.1 -p 5444 -U postgres -d "$db" -tA -c "VACUUM ($opts) jobc_jobs" 2>&1 | grep -v '^$'
    e=$(date +%s.%N)
    echo "$(date +%T) vacuum $(echo "$e - $s" | bc) s"
  fi
  sleep $every
done
