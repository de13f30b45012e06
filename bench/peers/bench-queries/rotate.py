#!/usr/bin/env python3
"""The rotating variants of (a), (b) and (c): each request reads another (company, page).

usage:
  rotate.py prepare DIR QUERIES COMPANIES.tsv PROJECT_URL PG5_URL SEED LENGTH
  rotate.py check DIR LABEL PROJECT_URL PG5_URL SEED SAMPLE

prepare walks every company's inventories once through each server's own GraphQL
(QUERIES/{project,pg5}-cursors.graphql, in the order of the fixed queries: createdAt, then
id), checks that both list the same inventories in the same order (and as many as
COMPANIES.tsv, "company<TAB>inventories", counts), and writes into DIR:
  {q}-{side}.req   one line per key (company, page): "company<TAB>request body", the body
                   asking for that page with the side's own `after` cursor (none: page 1);
                   the same line number is the same key on both sides
  {q}-{dist}.seq   LENGTH key numbers (0-based lines of the .req files), one a line, drawn
                   with SEED: uniform over all keys, or Zipf (s = 1.1) over the ranks of a
                   fixed random permutation of the keys, so that hot keys spread over the
                   companies. Both sides read the same file: the same sequence of keys.
  notes.txt        the keys and how concentrated each sequence is
for q in a10 (nested, pages of 3), b10 (nested, pages of 20), c10 (flat, pages of 20) and
dist in uniform, zipf. post.lua replays a .seq over a .req (ROTATE_REQS, ROTATE_SEQ).

check asks both servers for SAMPLE keys of each sequence (drawn with SEED) and compares the
answers as compare.py does; one line per variant, "DIFFERENT" or "ERRORS" on a mismatch.
"""
import json, math, os, random, sys, urllib.error, urllib.request

from compare import canon_flat, canon_nested, compare

PAGES = {"a10": ("nested", 3), "b10": ("nested", 20), "c10": ("flat", 20)}
DISTS = ("uniform", "zipf")
ZIPF_S = 1.1
SIDES = ("project", "pg5")
WALK_PAGE = 100  # the project's largest page


def post(url, body, company):
    data = (body if isinstance(body, str) else json.dumps(body)).encode()
    req = urllib.request.Request(url, data=data,
                                 headers={"Content-Type": "application/json", "X-Company-Id": company})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return json.load(r)
    except urllib.error.HTTPError as e:
        return {"errors": [f"HTTP {e.code}: {e.read()[:300]!r}"]}


def top(doc):
    d = doc["data"]
    return d.get("inventories") or d.get("allInventories")


def walk(url, query, company):
    """The company's inventories in order: [(id, cursor)]."""
    out, after = [], None
    while True:
        doc = post(url, {"query": query, "variables": {"company": company, "first": WALK_PAGE, "after": after}}, company)
        if doc.get("errors"):
            sys.exit(f"ERRORS walking {url} for {company}: {json.dumps(doc['errors'])[:400]}")
        conn = top(doc)
        out += [(e["node"]["id"], e["cursor"]) for e in conn["edges"]]
        if not conn["pageInfo"]["hasNextPage"]:
            return out
        after = conn["pageInfo"]["endCursor"]


def draw(dist, n, seed, length):
    rng = random.Random(seed)
    if dist == "uniform":
        return [rng.randrange(n) for _ in range(length)]
    keys = list(range(n))
    rng.shuffle(keys)  # rank r is key keys[r - 1]
    cum, t = [], 0.0
    for r in range(1, n + 1):
        t += r ** -ZIPF_S
        cum.append(t)
    return rng.choices(keys, cum_weights=cum, k=length)


def concentration(seq, n):
    head = seq[:100_000]
    counts = {}
    for k in head:
        counts[k] = counts.get(k, 0) + 1
    top = sorted(counts.values(), reverse=True)
    hot = sum(top[:max(1, n // 100)])
    return (f"{n:,} keys; of the first {len(head):,} requests: {len(counts):,} distinct keys, the hottest key "
            f"{100 * top[0] / len(head):.1f}%, the hottest 1% of keys ({max(1, n // 100):,}) {100 * hot / len(head):.1f}%")


def prepare(d, qdir, companies_tsv, project_url, pg5_url, seed, length):
    counts = {}
    for line in open(companies_tsv):
        if line.strip():
            c, n = line.split("\t")
            counts[c] = int(n)
    companies = sorted(counts)
    urls = {"project": project_url, "pg5": pg5_url}
    walked = {}
    for side in SIDES:
        query = open(os.path.join(qdir, f"{side}-cursors.graphql")).read()
        walked[side] = {c: walk(urls[side], query, c) for c in companies}
    total = sum(counts.values())
    for c in companies:
        ids = {side: [i for i, _ in walked[side][c]] for side in SIDES}
        if ids["project"] != ids["pg5"] or len(ids["project"]) != counts[c]:
            print(f"cursor walk: DIFFERENT inventories for company {c}: project {len(ids['project'])}, "
                  f"pg5 {len(ids['pg5'])}, database {counts[c]}")
            return 1
    print(f"cursor walk: project and pg5 list the same {total:,} inventories in the same order over {len(companies)} companies")
    os.makedirs(d, exist_ok=True)
    notes = []
    for q, (kind, size) in PAGES.items():
        keys = [(c, p) for c in companies for p in range(math.ceil(counts[c] / size))]
        for side in SIDES:
            query = open(os.path.join(qdir, f"{side}-{kind}.graphql")).read()
            with open(os.path.join(d, f"{q}-{side}.req"), "w") as f:
                for c, p in keys:
                    after = walked[side][c][p * size - 1][1] if p else None
                    body = {"query": query, "variables": {"company": c, "first": size, "after": after}}
                    f.write(f"{c}\t{json.dumps(body)}\n")
        for dist in DISTS:
            # keyed by the page size, not the query: (b) and (c) read the same sequence
            seq = draw(dist, len(keys), f"{seed}:{size}:{dist}", length)
            with open(os.path.join(d, f"{q}-{dist}.seq"), "w") as f:
                f.write("\n".join(map(str, seq)) + "\n")
            notes.append(f"{q}-{dist}: pages of {size}, {concentration(seq, len(keys))}")
    with open(os.path.join(d, "notes.txt"), "w") as f:
        f.write("\n".join(notes) + "\n")
    print("\n".join(notes))
    return 0


def check(d, label, project_url, pg5_url, seed, sample):
    urls = {"project": project_url, "pg5": pg5_url}
    bad = 0
    for q, (kind, size) in PAGES.items():
        lines = {side: open(os.path.join(d, f"{q}-{side}.req")).read().splitlines() for side in SIDES}
        first = {}  # company -> its page 1's key
        for k, line in enumerate(lines["project"]):
            first.setdefault(line.split("\t", 1)[0], k)
        for dist in DISTS:
            seq = [int(x) for x in open(os.path.join(d, f"{q}-{dist}.seq"))]
            rng = random.Random(f"{seed}:check:{q}-{dist}")
            keys = []
            for _ in range(50 * sample):  # distinct keys, as the sequence draws them
                k = seq[rng.randrange(len(seq))]
                if k not in keys:
                    keys.append(k)
                if len(keys) == sample:
                    break
            totals, failed = {}, None
            for k in keys:
                docs = {}
                for side in SIDES:
                    company, body = lines[side][k].split("\t", 1)
                    docs[side] = post(urls[side], body, company)
                ok, summary = compare(kind, docs["project"], docs["pg5"])
                if not ok:
                    failed = f"key {k} (company {company}, page {1 + k - first[company]}): {summary}"
                    break
                for name, n in (canon_nested if kind == "nested" else canon_flat)(docs["project"])[1].items():
                    if name != "totalCount":
                        totals[name] = totals.get(name, 0) + n
            print(f"{label} ({q}-{dist}) pg5 vs project, {len(keys)} keys: " +
                  (failed if failed else f"same records, in all {totals}"))
            bad += failed is not None
    return 1 if bad else 0


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "prepare":
        d, qdir, tsv, pu, gu, seed, length = args
        sys.exit(prepare(d, qdir, tsv, pu, gu, seed, int(length)))
    if cmd == "check":
        d, label, pu, gu, seed, sample = args
        sys.exit(check(d, label, pu, gu, seed, int(sample)))
    sys.exit(__doc__)
