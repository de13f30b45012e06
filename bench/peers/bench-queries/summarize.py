#!/usr/bin/env python3
"""Prints the tables of one bench-vs-peers.sh run (markdown) from its results folder.
usage: summarize.py RESULTS_DIR
Per size: one table per GraphQL query with the project, PostGraphile 5 and their ratio
(median of the per-round ratios), p50/p99, CPU per request (server and PostgreSQL), RSS and
the project on SQLite beside; the REST requests A1, B1 and A4 (project only) with their GraphQL
reference; then the detail tables (throughput per round, latency, CPU, load averages, memory),
SQL statements per request, sequential latency, the pgbench ceiling and the record checks.
The rotating variants (a10-uniform, ...: each request another company and page) are rows of the
same tables; the project's tree-cache hit rate is hits / (hits + misses) of its /metrics counters
over the timed runs (n/a: the server does not count them)."""
import csv, os, statistics, sys
from collections import defaultdict

R = sys.argv[1]
QUERIES = [("a10", "(a) nested, 3 inventories, c=10"), ("a50", "(a) nested, 3 inventories, c=50"),
           ("b10", "(b) nested, 20 inventories, c=10"), ("c10", "(c) flat page of 20 + totalCount, c=10"),
           ("a10-uniform", "(a) rotating: uniform over every company's pages of 3, c=10"),
           ("a10-zipf", "(a) rotating: Zipf s=1.1 over the pages of 3, c=10"),
           ("b10-uniform", "(b) rotating: uniform over every company's pages of 20, c=10"),
           ("b10-zipf", "(b) rotating: Zipf s=1.1 over the pages of 20, c=10"),
           ("c10-uniform", "(c) rotating: uniform over every company's pages of 20, c=10"),
           ("c10-zipf", "(c) rotating: Zipf s=1.1 over the pages of 20, c=10")]
REST = [("A1", "A1 GET /inventory/detail/{id} (most items)"), ("A1gql", "A1's GraphQL document on /graphql"),
        ("B1", "B1 GET /api/v1/inventories page 1 of 20"), ("B1gql", "B1's GraphQL document on /graphql"),
        ("A4", "A4 GET /property/get_properties/{company} page 1"), ("A4gql", "A4's GraphQL document on /graphql")]
NAMES = {"project": "project (PG)", "pg5": "PostGraphile 5", "pg4": "PostGraphile 4", "sqlite": "project (SQLite)"}


def rows(name):
    path = os.path.join(R, name)
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return list(csv.DictReader(f, delimiter="\t"))


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(x, nd=0):
    return "-" if x is None else f"{x:,.{nd}f}"


def read(name):
    path = os.path.join(R, name)
    return open(path).read().strip() if os.path.exists(path) else ""


out = []
p = out.append
p("# bench-vs-peers results\n")
v = read("versions.txt")
if v:
    p("```\n" + v + "\n```\n")

load = rows("load.tsv")
sizes = []
for r in load:
    if r["size"] not in sizes:
        sizes.append(r["size"])

for size in sizes:
    L = [r for r in load if r["size"] == size]
    by = defaultdict(dict)  # (query, side) -> round -> row
    for r in L:
        by[(r["query"], r["side"])][r["round"]] = r
    sides = [s for s in ("project", "pg5", "pg4", "sqlite") if any(k[1] == s for k in by)]
    queries = [(q, label) for q, label in QUERIES if any(k[0] == q for k in by)]
    gen = read(f"generate-{size}-postgres.txt")
    p(f"## {size} data\n")
    if gen:
        p("```\n" + gen + "\n```\n")
    def col(q, side, field):
        rr = by.get((q, side))
        return med([float(r[field]) for r in rr.values()]) if rr else None

    def mib(q, side):
        rr = by.get((q, side))
        if not rr:
            return "-"
        return f"{med([int(r['vmrss_kb']) for r in rr.values()]) / 1024:.0f} / {max(int(r['vmhwm_kb']) for r in rr.values()) / 1024:.0f}"

    def hit_rate(q, side="project"):
        rr = by.get((q, side))
        if not rr:
            return "-"
        hm = [(r.get("cache_hits"), r.get("cache_misses")) for r in rr.values()]
        if any(h in (None, "", "-") or m in (None, "", "-") for h, m in hm):
            return "n/a"
        h, n = sum(int(h) for h, _ in hm), sum(int(h) + int(m) for h, m in hm)
        return f"{100 * h / n:.1f}% of {n:,}" if n else "no lookups"

    def ratios(q, a, b, field="rps"):
        rs = []
        for rnd, ra in by[(q, a)].items():
            rb = by[(q, b)].get(rnd)
            if rb and float(rb[field]) > 0:
                rs.append(float(ra[field]) / float(rb[field]))
        return med(rs), rs

    p("### Summary per query (medians over rounds; ratio = median of the per-round project/PG5 ratios)\n")
    p("CPU ms/request: the server process + all PostgreSQL processes (SQLite: the server only). "
      "RSS: VmRSS after the query's runs (median) / VmHWM, the peak so far (max), MiB. "
      "Tree cache: the project's inventory_tree_cache hits / (hits + misses) over the timed runs, of so many lookups.\n")
    hdr = ["query", "project req/s", "PG5 req/s", "project/PG5", "project p50 / p99 ms", "PG5 p50 / p99 ms",
           "project CPU ms/req srv + PG", "PG5 CPU ms/req srv + PG", "project tree cache hits",
           "project RSS / HWM", "PG5 RSS / HWM"]
    if "sqlite" in sides:
        hdr += ["SQLite req/s", "SQLite p50 / p99 ms", "SQLite CPU ms/req", "SQLite RSS / HWM"]
    p("| " + " | ".join(hdr) + " |")
    p("|" + "---|" * len(hdr))
    for q, label in queries:
        cells = [label]
        for sd in ("project", "pg5"):
            cells.append(fmt(col(q, sd, "rps")))
        rp5, _ = ratios(q, "project", "pg5") if by.get((q, "project")) and by.get((q, "pg5")) else (None, [])
        cells.append(f"**{fmt(rp5, 2)}**")
        for sd in ("project", "pg5"):
            cells.append(f"{fmt(col(q, sd, 'p50_ms'), 1)} / {fmt(col(q, sd, 'p99_ms'), 1)}")
        for sd in ("project", "pg5"):
            cells.append(f"{fmt(col(q, sd, 'cpu_ms_per_req'), 2)} + {fmt(col(q, sd, 'pg_cpu_ms_per_req'), 2)}")
        cells.append(hit_rate(q))
        for sd in ("project", "pg5"):
            cells.append(mib(q, sd))
        if "sqlite" in sides:
            if by.get((q, "sqlite")):
                cells += [fmt(col(q, "sqlite", "rps")),
                          f"{fmt(col(q, 'sqlite', 'p50_ms'), 1)} / {fmt(col(q, 'sqlite', 'p99_ms'), 1)}",
                          fmt(col(q, "sqlite", "cpu_ms_per_req"), 2), mib(q, "sqlite")]
            else:
                cells += ["-"] * 4
        p("| " + " | ".join(cells) + " |")
    p("")
    notes = read(f"rotate-{size}/notes.txt")
    if notes:
        p("Rotating variants: the keys (company, page) and their sequences, the same for both sides "
          "(rotate-" + size + "/):\n")
        p("```\n" + notes + "\n```\n")
    if any(by.get((q, "project")) for q, _ in REST):
        p("### REST on the project (PostgreSQL), c=10: no PostGraphile counterpart\n")
        p("Each REST request runs a GraphQL document in-process (rest/operations/); the `gql` rows POST that "
          "document to /graphql, as a reference for the REST layer's cost.\n")
        p("| request | req/s | p50 / p99 ms | CPU ms/req srv + PG | RSS / HWM MiB | errors | bytes/resp |")
        p("|---|---|---|---|---|---|---|")
        for q, label in REST:
            rr = by.get((q, "project"))
            if not rr:
                continue
            p(f"| {q}: {label} | {fmt(col(q, 'project', 'rps'))} | {fmt(col(q, 'project', 'p50_ms'), 1)} / "
              f"{fmt(col(q, 'project', 'p99_ms'), 1)} | {fmt(col(q, 'project', 'cpu_ms_per_req'), 2)} + "
              f"{fmt(col(q, 'project', 'pg_cpu_ms_per_req'), 2)} | {mib(q, 'project')} | "
              f"{sum(int(r['errors']) for r in rr.values())} | {fmt(med([float(r['bytes_per_req']) for r in rr.values()]))} |")
        p("")
    p("### Throughput (median req/s over rounds) and ratio project/peer (median of the per-round ratios)\n")
    hdr = ["query"] + [NAMES[s] + " req/s" for s in sides] + ["project/PG5"] + (["project/PG4"] if "pg4" in sides else []) + \
          (["SQLite/PG project"] if "sqlite" in sides else [])
    p("| " + " | ".join(hdr) + " |")
    p("|" + "---|" * len(hdr))

    def ratio(q, a, b, field="rps"):
        rs = []
        for rnd, ra in by[(q, a)].items():
            rb = by[(q, b)].get(rnd)
            if rb and float(rb[field]) > 0:
                rs.append(float(ra[field]) / float(rb[field]))
        return med(rs), rs

    for q, label in queries:
        cells = [label]
        for s in sides:
            cells.append(fmt(med([float(r["rps"]) for r in by[(q, s)].values()])) if by.get((q, s)) else "-")
        rp5, rs5 = ratio(q, "project", "pg5")
        cells.append(f"**{fmt(rp5, 2)}** ({', '.join(fmt(x, 2) for x in rs5)})")
        if "pg4" in sides:
            rp4, rs4 = ratio(q, "project", "pg4")
            cells.append(f"{fmt(rp4, 2)} ({', '.join(fmt(x, 2) for x in rs4)})")
        if "sqlite" in sides:
            if by.get((q, "sqlite")):
                rsq, _ = ratio(q, "sqlite", "project")
                cells.append(fmt(rsq, 2))
            else:
                cells.append("-")
        p("| " + " | ".join(cells) + " |")
    p("")
    p("### Latency (median over rounds of each run's p50 / p99, ms)\n")
    hdr = ["query"] + [NAMES[s] + " p50 / p99" for s in sides] + ["p50 project/PG5"]
    p("| " + " | ".join(hdr) + " |")
    p("|" + "---|" * len(hdr))
    for q, label in queries:
        cells = [label]
        for s in sides:
            rr = by.get((q, s))
            cells.append(f"{fmt(med([float(r['p50_ms']) for r in rr.values()]), 1)} / {fmt(med([float(r['p99_ms']) for r in rr.values()]), 1)}" if rr else "-")
        rp, _ = ratio(q, "project", "pg5", "p50_ms")
        cells.append(fmt(rp, 2))
        p("| " + " | ".join(cells) + " |")
    p("")
    if L and L[0].get("cpu_ms_per_req") not in (None, ""):
        p("### CPU time per request (ms, median over rounds): server process + PostgreSQL processes\n")
        p("Less sensitive to the other testers' load than req/s: it is the work each request costs.\n")
        hdr = ["query"] + [NAMES[s] for s in sides] + ["server CPU project/PG5", "total CPU project/PG5"]
        p("| " + " | ".join(hdr) + " |")
        p("|" + "---|" * len(hdr))
        for q, label in queries:
            cells, tot = [label], {}
            for s in sides:
                rr = by.get((q, s))
                if not rr:
                    cells.append("-")
                    continue
                srv = med([float(r["cpu_ms_per_req"]) for r in rr.values()])
                pg = med([float(r["pg_cpu_ms_per_req"]) for r in rr.values()])
                tot[s] = (srv, srv + pg)
                cells.append(f"{srv:.2f} + {pg:.2f}")
            if "project" in tot and "pg5" in tot:
                cells.append(f"{tot['project'][0] / tot['pg5'][0]:.2f}" if tot["pg5"][0] else "-")
                cells.append(f"{tot['project'][1] / tot['pg5'][1]:.2f}" if tot["pg5"][1] else "-")
            else:
                cells += ["-", "-"]
            p("| " + " | ".join(cells) + " |")
        p("")
    errs = sum(int(r["errors"]) for r in L)
    p(f"Errors (socket errors + non-2xx) over all runs: {errs}. Bytes per response (incl. headers), first round: " +
      ", ".join(f"{q}/{s} {int(float(r['bytes_per_req'])):,}" for (q, s), rr in sorted(by.items()) for rnd, r in rr.items() if rnd == "1") + "\n")
    p("### Rounds: loadavg and per-round req/s\n")
    lav = defaultdict(dict)
    if os.path.exists(os.path.join(R, "loadavg.tsv")):
        for line in open(os.path.join(R, "loadavg.tsv")):
            sz, rnd, when, rest = line.rstrip("\n").split("\t", 3)
            if sz == size:
                lav[rnd][when] = " ".join(rest.split()[:3])
    rounds = sorted({r["round"] for r in L}, key=int)
    ALL = queries + REST
    hdr = ["round", "loadavg at start", "loadavg at end"] + [f"{q} {s}" for q, _ in ALL for s in sides if by.get((q, s))]
    p("| " + " | ".join(hdr) + " |")
    p("|" + "---|" * len(hdr))
    for rnd in rounds:
        cells = [rnd, lav[rnd].get("start", "-"), lav[rnd].get("end", "-")]
        for q, _ in ALL:
            for s in sides:
                if by.get((q, s)):
                    r = by[(q, s)].get(rnd)
                    cells.append(f"{fmt(float(r['rps']))} (l {r['load1']})" if r else "-")
        p("| " + " | ".join(cells) + " |")
    p("")
    p("### Server memory after the loads (KiB)\n")
    p("| server | VmRSS after last run | VmHWM (peak) |")
    p("|---|---|---|")
    for s in sides:
        rr = [r for r in L if r["side"] == s]
        last = rr[-1]
        p(f"| {NAMES[s]} | {int(last['vmrss_kb']):,} | {max(int(r['vmhwm_kb']) for r in rr):,} |")
    p("")

if os.path.exists(os.path.join(R, "sql-counts.tsv")):
    p("## SQL statements per request (log_statement=all, one request after a warm one)\n")
    counts = defaultdict(dict)
    for line in open(os.path.join(R, "sql-counts.tsv")):
        sz, label, n = line.rstrip("\n").split("\t")
        counts[label][sz] = n
    szs = sorted({sz for c in counts.values() for sz in c}, key=lambda s: (s != "small", s))
    p("| request | " + " | ".join(szs) + " |")
    p("|---|" + "---|" * len(szs))
    for label, c in counts.items():
        p(f"| {label} | " + " | ".join(c.get(sz, "-") for sz in szs) + " |")
    p("")

seq = rows("seq.tsv")
if seq:
    p("## Sequential latency (hey -c 1, ms)\n")
    notes = read("seq-notes.txt")
    if notes:
        p("```\n" + notes + "\n```\n")
    p("| size | request | p50 | p99 | 200s | load1 |")
    p("|---|---|---|---|---|---|")
    for r in seq:
        p(f"| {r['size']} | {r['name']} | {r['p50_ms']} | {r['p99_ms']} | {r['ok']} | {r['load1']} |")
    p("")

pgb = rows("pgbench.tsv")
if pgb:
    p("## Database ceiling for (a): pgbench -M prepared -c 10 -j 2 (transactions/s; one transaction = one (a) request's SQL)\n")
    p("| size | script | statements | tps per round | median tps | project HTTP (a) c=10 as % of it | PG5 HTTP (a) c=10 as % of it |")
    p("|---|---|---|---|---|---|---|")
    agg = defaultdict(list)
    stm = {}
    for r in pgb:
        agg[(r["size"], r["script"])].append(float(r["tps"] or 0))
        stm[(r["size"], r["script"])] = r["statements"]
    for (sz, script), tps in agg.items():
        m = med(tps)
        def http(side):
            xs = [float(r["rps"]) for r in load if r["size"] == sz and r["query"] == "a10" and r["side"] == side]
            return f"{100 * med(xs) / m:.0f}%" if xs and m else "-"
        p(f"| {sz} | {script} | {stm[(sz, script)]} | {', '.join(fmt(x) for x in tps)} | {fmt(m)} | {http('project')} | {http('pg5')} |")
    p("")

chk = read("check.txt")
if chk:
    p("## Same records\n")
    p("```\n" + chk + "\n```")
print("\n".join(out))
