-- wrk script: with $BODY set, POSTs the JSON body in that file with the company header
-- ($COMPANY as X-Company-Id); with $ROTATE_REQS set (the rotating variants, rotate.py),
-- POSTs the requests of that file ("company<TAB>body" a line) in the order of the key numbers
-- in $ROTATE_SEQ, from its line $ROTATE_OFFSET on (wrapping), each with its company header;
-- otherwise GETs the URL as given (the REST requests carry x-company-id in their query string).
-- Prints one machine-readable line at the end (requests/s, p50/p99 in ms, requests,
-- bytes/request, errors: socket errors + non-2xx).
local body = os.getenv("BODY")
if body and body ~= "" then
  local f = assert(io.open(body, "rb"))
  wrk.method = "POST"
  wrk.body = f:read("*a")
  f:close()
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["X-Company-Id"] = os.getenv("COMPANY")
end
local rotate = os.getenv("ROTATE_REQS")
if rotate and rotate ~= "" then
  local reqs, seq, i = {}, {}, 0
  -- init runs in the load thread only (the top level runs in wrk's main state as well), so the
  -- files are read once; -t1: its connections share one position in the sequence
  function init(args)
    for line in io.lines(rotate) do
      local company, body = line:match("^([^\t]*)\t(.*)$")
      reqs[#reqs + 1] = wrk.format("POST", nil,
        { ["Host"] = wrk.headers["Host"], ["Content-Type"] = "application/json", ["X-Company-Id"] = company }, body)
    end
    for line in io.lines(os.getenv("ROTATE_SEQ")) do seq[#seq + 1] = tonumber(line) + 1 end
    i = tonumber(os.getenv("ROTATE_OFFSET") or "0") % #seq
  end
  function request()
    i = i % #seq + 1
    return reqs[seq[i]]
  end
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("RESULT rps=%.1f p50=%.2f p99=%.2f n=%d bytes_per_req=%.0f errors=%d\n",
    summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.requests, summary.bytes / math.max(summary.requests, 1),
    e.connect + e.read + e.write + e.status + e.timeout))
end
