#!/usr/bin/env python3
"""Checks that a REST request of the project returns the records of the GraphQL document
it runs in-process (rest/operations/), POSTed to /graphql as the bench's reference.
usage: restcheck.py A1|B1|A4 REST.json GRAPHQL.json
  A1: the inventory id, and its environments, items (ids) and photos (storage references),
      in order (both come from the same document).
  B1: the inventory ids of the page, in order, and totalRecords.
  A4: the property ids of the page, in order, and the total.
Prints a one-line summary; exit 1 on a mismatch or an error."""
import json, sys

kind, rest_path, gql_path = sys.argv[1:4]
try:
    rest = json.load(open(rest_path))
except Exception as e:  # an error page, an empty body
    print("ERRORS in", rest_path, repr(e)[:200]); sys.exit(1)
gql = json.load(open(gql_path))
if gql.get("errors"):
    print("ERRORS in", gql_path, json.dumps(gql["errors"])[:400]); sys.exit(1)
if isinstance(rest, dict) and (rest.get("error") or rest.get("errors") or rest.get("success") is False):
    print("ERRORS in", rest_path, json.dumps(rest)[:400]); sys.exit(1)

def a1(inv):
    envs = [(e["EnvironmentName"], [(i["ItemDiagnosticId"], [p["StorageReference"] for p in i["Photo"] or []])
                                     for i in e["ItemDiagnostic"] or []]) for e in inv["EnvironmentDiagnostics"] or []]
    n = {"env": len(envs), "item": sum(len(e[1]) for e in envs), "photo": sum(len(i[1]) for e in envs for i in e[1])}
    return (inv["InventoryId"], envs), n

def b1(page):
    ids = [d["inventoryId"] for d in page["data"]]
    return (page["totalRecords"], ids), {"inv": len(ids), "totalRecords": page["totalRecords"]}

def a4(ids, total):
    return (total, ids), {"prop": len(ids), "total": total}

if kind == "A4":
    page = gql["data"]["propertyPage"]
    ca, na = a4([d["PropertyId"] for d in rest["data"]], rest["meta"]["total"])
    cb, nb = a4([d["PropertyId"] for d in page["data"]], page["totalRecords"])
elif kind == "A1":
    ca, na = a1(rest); cb, nb = a1(gql["data"]["node"])
else:
    ca, na = b1(rest["data"]); cb, nb = b1(gql["data"]["inventoryPage"])
ok = ca == cb
print(("same records" if ok else "DIFFERENT records"), "REST", na, "GraphQL", nb)
sys.exit(0 if ok else 1)
