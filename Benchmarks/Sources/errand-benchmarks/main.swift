import Errand
import ErrandStubs
import Foundation

/// `errand-benchmarks --url http://127.0.0.1:PORT/dogs.json [--seconds S] [--rounds R] [--output FILE]
/// [--concurrencies 1,8,32,128]`
var arguments = CommandLine.arguments.dropFirst()
var options: [String: String] = [:]
while let key = arguments.popFirst() {
  options[key] = arguments.popFirst() ?? ""
}
if let scenario = options["--streaming"] {
  guard let address = options["--url"], let url = URL(string: address) else { exit(2) }
  try await Streaming.run(scenario, url: url, path: options["--path"] ?? "")
  exit(0)
}
if options["--cache"] != nil {
  guard let address = options["--url"], let url = URL(string: address) else { exit(2) }
  let rounds = Int(options["--rounds"] ?? "") ?? 5
  print(try await CacheBenchmark.run(base: url, rounds: rounds, iterations: 500))
  exit(0)
}
if let mode = options["--cache-store"] {
  // The memory cache alone, no network: `--cache-store timing [--rounds R] [--calls N]`, or
  // `--cache-store memory` (in a process of its own, so its resident memory is its own).
  if mode == "memory" {
    print(try await CacheStoreBenchmark.memory(count: 40_000))
  } else {
    print(
      try await CacheStoreBenchmark.run(
        rounds: Int(options["--rounds"] ?? "") ?? 5, calls: Int(options["--calls"] ?? "") ?? 2_000))
  }
  exit(0)
}
if let address = options["--http-versions"] {
  // CurlTransport over TLS, HTTP/1.1 against HTTP/2: `--http-versions URL --ca FILE`.
  #if os(Linux)
    guard let url = URL(string: address), let ca = options["--ca"] else { exit(2) }
    print(
      try await HTTPVersions.run(
        url: url, caFile: ca, cLoop: options["--c-loop"], concurrencies: [1, 8, 32],
        rounds: Int(options["--rounds"] ?? "") ?? 5,
        seconds: Double(options["--seconds"] ?? "") ?? 2))
  #endif
  exit(0)
}
if let count = options["--soak"] {
  guard let address = options["--url"], let url = URL(string: address) else { exit(2) }
  await Soak.run(url: url, requests: Int(count) ?? 1_000_000, concurrency: 64)
  exit(0)
}
if let count = options["--profile-route"].flatMap({ Int($0) }) {
  // The client's overhead over the route stub alone, `count` calls per loop, fresh stubs for
  // each loop; `--only direct` or `--only send` runs one loop once, for profilers.
  print(
    try await Overhead.profileRoute(
      count, only: options["--only"], rounds: Int(options["--rounds"] ?? "") ?? 9))
  exit(0)
}
if options["--profile-overhead"] != nil {
  // For profilers: only the client-overhead loop, and its parts.
  let client = APIClient(
    baseURL: URL(string: "https://api.example.com/v1")!, transport: ErrandStubs.StubTransport())
  let endpoint = Endpoint<Data>(path: "dogs")
  let n = 50_000
  var start = now()
  for _ in 0..<n { _ = try client.makeRequest(for: endpoint) }
  print("makeRequest", (now() - start) * 1e9 / Double(n), "ns")
  let response = HTTPResponse(status: 200, body: Data("{}".utf8))
  start = now()
  for _ in 0..<n { _ = try client.decode(response, for: endpoint) }
  print("decode", (now() - start) * 1e9 / Double(n), "ns")
  start = now()
  for _ in 0..<n { _ = URL(string: "https://api.example.com/v1/dogs") }
  print("URL(string:)", (now() - start) * 1e9 / Double(n), "ns")
  start = now()
  for _ in 0..<n { _ = URLComponents(url: client.baseURL, resolvingAgainstBaseURL: true) }
  print("URLComponents", (now() - start) * 1e9 / Double(n), "ns")
  let r = try await Overhead.run(iterations: 20_000, rounds: 3)
  for (index, rounds) in r.enumerated() {
    print(Overhead.stubs[index].label, rounds)
  }
  exit(0)
}
guard let address = options["--url"], let url = URL(string: address) else {
  FileHandle.standardError.write(
    Data(
      "usage: errand-benchmarks --url http://127.0.0.1:PORT/dogs.json [--seconds S] [--rounds R] [--output FILE]\n"
        .utf8))
  exit(2)
}
let seconds = Double(options["--seconds"] ?? "") ?? 2
let rounds = Int(options["--rounds"] ?? "") ?? 5
let concurrencies =
  options["--concurrencies"].map { $0.split(separator: ",").compactMap { Int($0) } }
  ?? [1, 8, 32, 128]

let cLoop = options["--c-loop"]
let throughput = await Throughput.run(
  url: url, cLoop: cLoop, concurrencies: concurrencies, rounds: rounds, seconds: seconds)
if ProcessInfo.processInfo.environment["ERRAND_BENCHMARK_ONLY"] != nil {
  // Profiling one throughput contender: nothing else runs.
  exit(0)
}
let overhead = try await Overhead.run(iterations: 20_000, rounds: 5)
let decoding = try await Decoding.run(rounds: 7)

var report = """
  # Errand benchmarks

  \(ISO8601DateFormatter().string(from: Date())), \(ProcessInfo.processInfo.activeProcessorCount) cores, \
  release build, server: \(options["--server"] ?? url.absoluteString); medians of \(rounds) interleaved \
  rounds of \(format(seconds, decimals: 1)) s each.

  ## Throughput of a small JSON GET (fetch and decode)

  Requests per second, median (min–max) of the rounds; processor time per request (user and
  system, whole process, median); and the ratio to raw `URLSession.data(for:)` with Errand's
  configuration, computed round by round (median, min–max).

  | Concurrency | Contender | Requests/s | CPU µs/request | / raw, same configuration |
  | ---: | --- | ---: | ---: | ---: |

  """
#if os(Linux)
  let hasCurl = true
  let plainIndices = [2, 5]
#else
  let hasCurl = false
  let plainIndices = [2]
#endif
let hasCLoop = hasCurl && cLoop != nil
var names = [
  "URLSession data(for:), default configuration", "URLSession data(for:), Errand's configuration",
  "Errand APIClient + URLSessionTransport", "raw delegate task, Errand's configuration",
  "URLSessionTransport alone",
]
#if os(Linux)
  names += ["Errand APIClient + CurlTransport", "CurlTransport alone (no decode)"]
  if cLoop != nil {
    names.append("C libcurl multi loop (no decode)")
  }
#endif
// Last, so the indices above stay: the same clients with one no-op event listener.
names.append("Errand APIClient + URLSessionTransport, no-op listener")
#if os(Linux)
  names.append("Errand APIClient + CurlTransport, no-op listener")
#endif
let listenerIndices = Array(names.count - plainIndices.count..<names.count)
for concurrency in concurrencies {
  let contenders = throughput[concurrency] ?? []
  guard contenders.count == names.count else { continue }
  let baseline = contenders[1].rates
  for (index, samples) in contenders.enumerated() {
    let ratios = zip(samples.rates, baseline).map { $0 / max($1, 1) }
    report +=
      "| \(concurrency) | \(names[index]) | \(range(samples.rates)) | "
      + "\(format(median(samples.cpu))) | \(range(ratios, decimals: 2)) |\n"
  }
}
if hasCurl {
  report += """

    ## CurlTransport against URLSessionTransport, both through APIClient

    Round by round: requests per second of CurlTransport over URLSessionTransport, and its
    processor time per request over URLSessionTransport's (median, min–max).

    | Concurrency | Requests/s ratio | CPU per request ratio |
    | ---: | ---: | ---: |

    """
  for concurrency in concurrencies {
    guard let contenders = throughput[concurrency], contenders.count == names.count else {
      continue
    }
    let rates = zip(contenders[5].rates, contenders[2].rates).map { $0 / max($1, 1) }
    let cpu = zip(contenders[5].cpu, contenders[2].cpu).map { $0 / max($1, 1) }
    report += "| \(concurrency) | \(range(rates, decimals: 2)) | \(range(cpu, decimals: 2)) |\n"
  }
}
if hasCLoop {
  report += """

    ## CurlTransport against the C ceiling

    Round by round, requests per second over those of a C program driving libcurl's multi
    interface on the same URL, concurrency and connection limit (16 per host), without decoding
    (`Benchmarks/c-loop/curl_multi_loop.c`): CurlTransport alone (no decoding either) and Errand
    with CurlTransport (decoding `[Dog]`); and processor time per request (median, µs).

    | Concurrency | C loop requests/s | CurlTransport alone / C | Errand + CurlTransport / C | CPU µs: C · alone · Errand |
    | ---: | ---: | ---: | ---: | ---: |

    """
  for concurrency in concurrencies {
    guard let contenders = throughput[concurrency], contenders.count == names.count else {
      continue
    }
    let alone = zip(contenders[6].rates, contenders[7].rates).map { $0 / max($1, 1) }
    let errand = zip(contenders[5].rates, contenders[7].rates).map { $0 / max($1, 1) }
    let cpu = [7, 6, 5].map { format(median(contenders[$0].cpu)) }.joined(separator: " · ")
    report +=
      "| \(concurrency) | \(range(contenders[7].rates)) | \(range(alone, decimals: 2)) | "
      + "\(range(errand, decimals: 2)) | \(cpu) |\n"
  }
}
report += """

  ## Metrics and one no-op event listener

  Round by round: requests per second of each client with one event listener that does nothing
  over the same client without listeners (both report transfer metrics, which are always on),
  and processor time per request likewise (median, min–max).

  | Concurrency | Transport | Requests/s ratio | CPU per request ratio |
  | ---: | --- | ---: | ---: |

  """
for concurrency in concurrencies {
  guard let contenders = throughput[concurrency], contenders.count == names.count else { continue }
  for (plain, listening) in zip(plainIndices, listenerIndices) {
    let rates = zip(contenders[listening].rates, contenders[plain].rates).map { $0 / max($1, 1) }
    let cpu = zip(contenders[listening].cpu, contenders[plain].cpu).map { $0 / max($1, 1) }
    let transport = plain == 2 ? "URLSessionTransport" : "CurlTransport"
    report +=
      "| \(concurrency) | \(transport) | \(range(rates, decimals: 2)) | \(range(cpu, decimals: 2)) |\n"
  }
}
report += """

  ## Client overhead over a stub transport (ns per request; median (min–max) of the rounds)

  Overhead is `send` minus calling the stub directly, round by round.

  | Stub answers from | Stub called directly | `send`, 60 s timeout | Overhead | `send`, no timeout | Overhead, no timeout |
  | --- | ---: | ---: | ---: | ---: | ---: |

  """
for (index, rounds) in overhead.enumerated() {
  let timedOverhead = zip(rounds.timed, rounds.direct).map { $0 - $1 }
  let untimedOverhead = zip(rounds.untimed, rounds.direct).map { $0 - $1 }
  report +=
    "| \(Overhead.stubs[index].label) | \(range(rounds.direct)) | \(range(rounds.timed)) | "
    + "\(range(timedOverhead)) | \(range(rounds.untimed)) | \(range(untimedOverhead)) |\n"
}
report += """

  ## One no-op event listener over a stub transport (ns per request; median (min–max) of the rounds)

  Wall time of `send` (60 s timeout) without and with the listener, and processor time of the
  whole process per request (the listener's queue runs on another thread).

  | Stub answers from | `send` | with the listener | Added | CPU | CPU with the listener | CPU added |
  | --- | ---: | ---: | ---: | ---: | ---: | ---: |

  """
for (index, rounds) in overhead.enumerated() {
  let added = zip(rounds.listening, rounds.timed).map { $0 - $1 }
  let cpuAdded = zip(rounds.listeningCPU, rounds.timedCPU).map { $0 - $1 }
  report +=
    "| \(Overhead.stubs[index].label) | \(range(rounds.timed)) | \(range(rounds.listening)) | "
    + "\(range(added)) | \(range(rounds.timedCPU)) | \(range(rounds.listeningCPU)) | "
    + "\(range(cpuAdded)) |\n"
}
report += """

  ## Decoding a \(format(Double(decoding.bytes) / 1_000_000, decimals: 2)) MB JSON array (median (min–max) of \(decoding.ratio.count) rounds)

  | JSONDecoder alone | Through APIClient.send | send / JSONDecoder | Two concurrent sends vs one (speedup) |
  | ---: | ---: | ---: | ---: |
  | \(range(decoding.decoder, decimals: 1)) MB/s | \(range(decoding.send, decimals: 1)) MB/s | \(range(decoding.ratio, decimals: 2)) | \(range(decoding.speedup, decimals: 2))× |

  """
print(report)
if let output = options["--output"] {
  try report.write(toFile: output, atomically: true, encoding: .utf8)
}
