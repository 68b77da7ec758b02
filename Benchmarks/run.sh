#!/usr/bin/env bash
# Measure Errand against raw URLSession in one run and write the table to Benchmarks/results.md.
# Starts a local server on 127.0.0.1 (nginx, installed with apt-get on Debian when missing; else a
# Python HTTP/1.1 server), builds in release mode, runs, and stops the server.
# Then the streaming scenarios (a 512 MB download and slow reader, 10,000 events, a size limit
# against a 2 GB and an endless body) into Benchmarks/results-streaming.md.
# Usage: Benchmarks/run.sh [seconds-per-sample] [rounds]
#        ERRAND_BENCHMARKS=streaming Benchmarks/run.sh 2 5   # the streaming scenarios alone
#        ERRAND_BENCHMARKS=throughput Benchmarks/run.sh 2 5  # all but the streaming scenarios
#        ERRAND_BENCHMARKS=soak Benchmarks/run.sh             # 1,000,000 requests through CurlTransport
#        ERRAND_BENCHMARKS=http-versions Benchmarks/run.sh 2 5  # CurlTransport, HTTP/1.1 against HTTP/2 over TLS
#          (nginx over TLS, with a certificate authority made for the run; also against
#          $HTTPBIN_TLS_URL/json when it and $HTTPBIN_TLS_CA_FILE are set)
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-2}"
rounds="${2:-5}"
work="$(mktemp -d)"
chmod 755 "$work"  # nginx workers run as another user and must read dogs.json
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
python3 - "$work/dogs.json" <<'PY'
import json, sys
dogs = [{"id": i, "name": f"Dog {i}", "breed": ["Labrador", "Shiba Inu", "Border Collie"][i % 3], "age": i % 15, "price": 100 + i} for i in range(10)]
open(sys.argv[1], "w").write(json.dumps(dogs, separators=(",", ":")))
PY
# Streaming: a 512 MB and a 2 GB body (sparse files, so they cost no disk), and 10,000 events.
truncate -s 512M "$work/big.bin"
truncate -s 256M "$work/mid.bin"
truncate -s 2G "$work/huge.bin"
python3 - "$work/events.txt" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(10000):
        f.write('event: dog\nid: %d\ndata: {"id":%d,"name":"Dog %d","breed":"Labrador"}\n\n' % (i, i, i))
PY

if ! command -v nginx > /dev/null && [ -x /usr/sbin/nginx ]; then PATH="$PATH:/usr/sbin"; fi
if ! command -v nginx > /dev/null && [ -f /etc/debian_version ] && command -v apt-get > /dev/null; then
  echo "installing nginx with apt-get..." >&2
  (apt-get install -y -q nginx-light || (apt-get update -q && apt-get install -y -q nginx-light)) > "$work/apt.log" 2>&1 \
    || echo "apt-get could not install nginx; using the Python server" >&2
  PATH="$PATH:/usr/sbin"
fi

# A certificate authority of the run's own and a certificate for 127.0.0.1 signed by it, for
# the TLS server block (HTTP/2 by ALPN).
tls_port=""
if command -v openssl > /dev/null; then
  (cd "$work" &&
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj /CN=bench-ca &&
    openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj /CN=127.0.0.1 &&
    printf 'subjectAltName=IP:127.0.0.1\n' > server.ext &&
    openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem \
      -days 2 -extfile server.ext) > "$work/openssl.log" 2>&1 \
    && tls_port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
fi
tls_server=""
[ -z "$tls_port" ] || tls_server="server {
    listen 127.0.0.1:$tls_port ssl http2;
    ssl_certificate $work/server.pem;
    ssl_certificate_key $work/server.key;
    location = /dogs.json { root $work; default_type application/json; }
  }"

if command -v nginx > /dev/null; then
  server="nginx $(nginx -v 2>&1 | sed 's/.*nginx\///')"
  mkdir -p "$work/logs"
  cat > "$work/nginx.conf" <<CONF
worker_processes 1;
pid $work/nginx.pid;
error_log $work/logs/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  keepalive_requests 1000000;
  keepalive_timeout 60s;
  server {
    listen 127.0.0.1:$port;
    location = /dogs.json { root $work; default_type application/json; }
    location = /cached/dogs.json { alias $work/dogs.json; default_type application/json; add_header Cache-Control "max-age=3600"; }
    location = /revalidated/dogs.json { alias $work/dogs.json; default_type application/json; add_header Cache-Control "no-cache"; }
    location = /events.txt { root $work; default_type text/event-stream; }
    location ~ \.bin$ { root $work; default_type application/octet-stream; }
    location ^~ /limited/ { alias $work/; default_type application/octet-stream; limit_rate 200m; }
  }
  $tls_server
}
CONF
  nginx -p "$work" -c "$work/nginx.conf"
else
  server="Python ThreadingHTTPServer (HTTP/1.1)"
  python3 - "$work" "$port" <<'PY' &
import http.server, sys, functools
class Handler(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *args): pass
handler = functools.partial(Handler, directory=sys.argv[1])
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[2])), handler).serve_forever()
PY
  server_pid=$!
fi

python3 - "http://127.0.0.1:$port/dogs.json" <<'PY'
import sys, time, urllib.request
for _ in range(100):
    try:
        urllib.request.urlopen(sys.argv[1], timeout=1).read(); sys.exit(0)
    except Exception:
        time.sleep(0.1)
sys.exit("the benchmark server did not start")
PY

swift build -c release --product errand-benchmarks >&2
# The C ceiling for CurlTransport (Linux): a plain loop over libcurl's multi interface, built with
# the toolchain's clang against Errand's own libcurl loader, so no libcurl package is needed.
c_loop=()
if [ "$(uname -s)" = Linux ] && command -v clang > /dev/null; then
  clang -O2 -I ../Sources/CErrandCurl/include c-loop/curl_multi_loop.c \
    ../Sources/CErrandCurl/errand_curl.c -ldl -o "$work/curl-multi-loop" >&2 \
    && c_loop=(--c-loop "$work/curl-multi-loop")
fi
if [ "${ERRAND_BENCHMARKS:-all}" = http-versions ]; then
  case "$server" in nginx*) ;; *) echo "the HTTP version rows need nginx" >&2; exit 1 ;; esac
  [ -n "$tls_port" ] || { echo "the HTTP version rows need openssl" >&2; exit 1; }
  { echo; echo "## CurlTransport over TLS: HTTP/1.1 against HTTP/2 ($(date -u +%Y-%m-%dT%H:%M:%SZ))"; echo
    echo "Requests per second of one GET, answers checked, not decoded: median (min–max) of $rounds"
    echo "interleaved rounds of $seconds s; ratios round by round. $server over TLS, serving dogs.json:"
    echo
    .build/release/errand-benchmarks --http-versions "https://127.0.0.1:$tls_port/dogs.json" \
      --ca "$work/ca.pem" --seconds "$seconds" --rounds "$rounds" "${c_loop[@]}"
    if [ -n "${HTTPBIN_TLS_URL:-}" ] && [ -n "${HTTPBIN_TLS_CA_FILE:-}" ]; then
      echo; echo "The same against httpbin served by hypercorn over TLS (\`/json\`):"; echo
      .build/release/errand-benchmarks --http-versions "$HTTPBIN_TLS_URL/json" \
        --ca "$HTTPBIN_TLS_CA_FILE" --seconds "$seconds" --rounds "$rounds"
    fi; } | tee -a results.md
  exit 0
fi
if [ "${ERRAND_BENCHMARKS:-all}" = soak ]; then
  # A million requests through CurlTransport at 64 concurrent, one in twenty cancelled.
  { echo '# CurlTransport soak'; echo; echo '```'
    .build/release/errand-benchmarks --soak "${ERRAND_SOAK_REQUESTS:-1000000}" --url "http://127.0.0.1:$port/dogs.json"
    echo '```'; } | tee results-soak.md
  exit 0
fi
[ "${ERRAND_BENCHMARKS:-all}" = streaming ] || .build/release/errand-benchmarks --url "http://127.0.0.1:$port/dogs.json" --seconds "$seconds" --rounds "$rounds" \
  --server "$server" --output results.md "${c_loop[@]}"
# The HTTP cache against the network (nginx only: the Python server sends no caching headers).
case "$server" in nginx*)
  [ "${ERRAND_BENCHMARKS:-all}" = streaming ] || .build/release/errand-benchmarks --cache memory-and-loopback --url "http://127.0.0.1:$port/" \
    --rounds "$rounds" | tee -a results.md ;;
esac
# The HTTP cache in memory alone (no server): cost per call at 10, 10,000 and 100,000 entries,
# then, in a process of its own, resident memory against what the budget counts.
if [ "${ERRAND_BENCHMARKS:-all}" != streaming ]; then
  .build/release/errand-benchmarks --cache-store timing --rounds "$rounds" | tee -a results.md
  .build/release/errand-benchmarks --cache-store memory | tee -a results.md
fi
[ "${ERRAND_BENCHMARKS:-all}" != throughput ] || exit 0

# Streaming, one process per measurement so each peak resident size is its own, scenarios
# interleaved round by round; curl downloads the same 512 MB to disk beside Errand. The size
# limit runs against an endless chunked body (no Content-Length) from a small Python server.
endless_port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
python3 - "$endless_port" <<'PY' &
import http.server, sys
class Endless(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *args): pass
    def do_GET(self):
        self.send_response(200)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        chunk = b"%x\r\n%s\r\n" % (65536, b"\0" * 65536)
        try:
            while True:
                self.wfile.write(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Endless).serve_forever()
PY
endless_pid=$!
trap 'kill "$endless_pid" 2>/dev/null || true; cleanup' EXIT
base="http://127.0.0.1:$port"
samples="$work/streaming.txt"
: > "$samples"
for round in $(seq "$rounds"); do
  scenarios="download:big.bin slow-stream:big.bin urlsession-baseline:big.bin sse:events.txt sse-stub: limit:huge.bin"
  # A 256 MB body buffered whole by `send`, beside URLSession's `data(for:)` for the same body.
  scenarios="$scenarios buffered:mid.bin buffered-baseline:mid.bin"
  # At 200 MB/s, as a fast real network would deliver it (nginx only).
  case "$server" in nginx*) scenarios="$scenarios slow-stream:limited/big.bin" ;; esac
  # The same downloads through CurlTransport (Linux).
  [ "$(uname -s)" = Linux ] && scenarios="$scenarios download-curl:big.bin slow-stream-curl:big.bin buffered-curl:mid.bin"
  for scenario in $scenarios; do
    name="${scenario%%:*}"
    path="${scenario#*:}"
    label="$name"
    case "$path" in limited/*) label="$name-200" ;; esac
    .build/release/errand-benchmarks --streaming "$name" --url "$base" --path "$path" \
      | sed "s/^$name /$label /" >> "$samples"
  done
  .build/release/errand-benchmarks --streaming limit --url "http://127.0.0.1:$endless_port" --path endless \
    | sed 's/^limit /limit-endless /' >> "$samples"
  curl -s -o "$work/curl.bin" -w 'curl %{time_total} %{size_download} 0 -1\n' "$base/big.bin" >> "$samples"
  rm -f "$work/curl.bin"
done
python3 - "$samples" <<'PY' | tee results-streaming.md
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, seconds, size, events, peak = line.split()
    rows.setdefault(name, []).append((float(seconds), int(size), int(events), int(peak)))
def stat(values, digits=1):
    return f"{statistics.median(values):.{digits}f} ({min(values):.{digits}f}–{max(values):.{digits}f})"
print("\n## Streaming (medians of %d rounds, min–max)\n" % len(rows["download"]))
print("| Scenario | Result | Peak RSS (MB) |")
print("| --- | ---: | ---: |")
mbps = lambda r: [s / 1e6 / t for t, s, e, p in r]
peak = lambda r: stat([p / 1024 for t, s, e, p in r])
print(f"| 512 MB `download(_:to:)` | {stat(mbps(rows['download']))} MB/s | {peak(rows['download'])} |")
print(f"| 512 MB with `curl -o FILE` | {stat(mbps(rows['curl']))} MB/s | – |")
print(f"| 512 MB `stream`, reader sleeps 1 ms per chunk | {stat([t for t, *_ in rows['slow-stream']], 2)} s | {peak(rows['slow-stream'])} |")
if "slow-stream-200" in rows:
    print(f"| the same at 200 MB/s (nginx `limit_rate`) | {stat([t for t, *_ in rows['slow-stream-200']], 2)} s | {peak(rows['slow-stream-200'])} |")
if "download-curl" in rows:
    print(f"| 512 MB `download(_:to:)` through CurlTransport | {stat(mbps(rows['download-curl']))} MB/s | {peak(rows['download-curl'])} |")
    print(f"| 512 MB `stream` through CurlTransport, reader sleeps 1 ms per chunk | {stat([t for t, *_ in rows['slow-stream-curl']], 2)} s | {peak(rows['slow-stream-curl'])} |")
seconds = lambda r: stat([t for t, *_ in r], 2)
print(f"| 256 MB buffered `send` | {seconds(rows['buffered'])} s | {peak(rows['buffered'])} |")
if "buffered-curl" in rows:
    print(f"| 256 MB buffered `send` through CurlTransport | {seconds(rows['buffered-curl'])} s | {peak(rows['buffered-curl'])} |")
print(f"| 256 MB with URLSession's `data(for:)` | {seconds(rows['buffered-baseline'])} s | {peak(rows['buffered-baseline'])} |")
print(f"| 512 MB through URLSession alone, a delegate that only counts | {stat(mbps(rows['urlsession-baseline']))} MB/s | {peak(rows['urlsession-baseline'])} |")
print(f"| 10,000 events through `events` | {stat([e / t for t, s, e, p in rows['sse']], 0)} events/s | {peak(rows['sse'])} |")
print(f"| 10,000 events from a stub on a TestClock | {stat([e / t for t, s, e, p in rows['sse-stub']], 0)} events/s | {peak(rows['sse-stub'])} |")
for key, label in (("limit", "2 GB body with Content-Length"), ("limit-endless", "endless chunked body")):
    ok = all(e == 1 for t, s, e, p in rows[key])
    outcome = "dataLengthExceedsMaximum" if ok else "NOT STOPPED"
    print(f"| buffered `send`, 1 MB limit, {label} | {outcome} after {stat([t * 1000 for t, *_ in rows[key]], 0)} ms | {peak(rows[key])} |")
PY
# The 256 MB buffered rows belong beside the throughput table too: replace any earlier copy.
python3 - results-streaming.md results.md <<'PY'
import sys
rows = [line for line in open(sys.argv[1]) if line.startswith("| 256 MB")]
try:
    text = open(sys.argv[2]).read().split("\n## Large buffered bodies")[0].rstrip("\n")
except FileNotFoundError:
    text = "# Errand benchmarks"
text += "\n\n## Large buffered bodies (from results-streaming.md)\n\n"
text += "| Scenario | Time, median (min–max) | Peak RSS (MB) |\n| --- | ---: | ---: |\n" + "".join(rows)
open(sys.argv[2], "w").write(text)
PY
