#!/bin/bash
# once the longhaul database has jobc_jobs, set its autovacuum settings to $1
while true; do
  db=$(psql -h 127.0.0.1 -p 5444 -U postgres -tA -c "select datname from pg_database where datname like 'bench_longhaul%' limit 1")
  if [ -n "$db" ] && psql -h 127.0.0.1 -p 5444 -U postgres -d "$db" -tA -c "ALTER TABLE jobc_jobs SET ($1)" 2>/dev/null; then echo "$(date +%T) set $1 on $db"; exit 0; fi
  sleep 0.5
done
