-- wrk script: with $BODY set, POSTs the JSON body in that file with the company header
-- ($COMPANY as X-Company-Id); with $BODY empty or unset, GETs the URL as given (the REST
-- requests carry x-company-id in their query string). Prints one machine-readable line at the
-- end (requests/s, p50/p99 in ms, requests, bytes/request, errors: socket errors + non-2xx).
local body = os.getenv("BODY")
if body and body ~= "" then
  local f = assert(io.open(body, "rb"))
  wrk.method = "POST"
  wrk.body = f:read("*a")
  f:close()
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["X-Company-Id"] = os.getenv("COMPANY")
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("RESULT rps=%.1f p50=%.2f p99=%.2f n=%d bytes_per_req=%.0f errors=%d\n",
    summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.requests, summary.bytes / math.max(summary.requests, 1),
    e.connect + e.read + e.write + e.status + e.timeout))
end
