import Errand
import ErrandStubs
import Foundation

/// What `APIClient.send` adds over calling its transport directly, with a stub transport so the
/// network does not count.
enum Overhead {
  /// Nanoseconds per request in each round: the stub alone, and through the client with the
  /// default 60-second timeout and with none.
  struct Rounds {
    var direct: [Double] = []
    var timed: [Double] = []
    var untimed: [Double] = []
    /// Through a client with one no-op event listener (60-second timeout).
    var listening: [Double] = []
    /// Processor time of the whole process per request (ns), without and with the listener:
    /// the listener's queue runs on another thread, which wall time alone would not show.
    var timedCPU: [Double] = []
    var listeningCPU: [Double] = []
  }

  /// How the stub finds its answer.
  static let stubs: [(label: String, make: @Sendable () async -> StubTransport)] = [
    (
      "a route",
      {
        let stub = StubTransport()
        await stub.on(.get, "/v1/dogs", .status(200, body: Data("{}".utf8)))
        return stub
      }
    ),
    ("a handler", { StubTransport { _ in .status(200, body: Data("{}".utf8)) } }),
  ]

  /// For profilers and quick comparisons: the route stub called directly and through a client
  /// (60-second timeout), `count` calls of each per round, interleaved; nanoseconds per call,
  /// median of the rounds, and the overhead, median of the rounds' differences. With `direct`
  /// or `send` alone, only that loop runs (one round).
  static func profileRoute(_ count: Int, only: String?, rounds: Int) async throws -> String {
    let base = URL(string: "https://api.example.com/v1")!
    let endpoint = Endpoint<Data>(path: "dogs")
    let request = try APIClient(baseURL: base, transport: StubTransport()).makeRequest(
      for: endpoint)
    var direct: [Double] = []
    var send: [Double] = []
    for _ in 0..<(only == nil ? rounds : 1) {
      // A fresh stub for each loop: its journal grows alike in both.
      if only != "send" {
        let stub = await stubs[0].make()
        let start = now()
        for _ in 0..<count { _ = try await stub.send(request) }
        direct.append((now() - start) * 1e9 / Double(count))
      }
      if only != "direct" {
        let client = APIClient(baseURL: base, transport: await stubs[0].make())
        let start = now()
        for _ in 0..<count { _ = try await client.send(endpoint) }
        send.append((now() - start) * 1e9 / Double(count))
      }
    }
    guard only == nil else { return "\(Int((direct + send)[0])) ns" }
    let overhead = zip(send, direct).map { $0 - $1 }
    return
      "direct \(Int(median(direct))) send \(Int(median(send))) overhead \(Int(median(overhead)))"
      + " (\(Int(overhead.min() ?? 0))–\(Int(overhead.max() ?? 0)))"
  }

  /// Every stub and every variant in each round, in turn, so that drift hits them alike.
  static func run(iterations: Int, rounds: Int) async throws -> [Rounds] {
    let base = URL(string: "https://api.example.com/v1")!
    let endpoint = Endpoint<Data>(path: "dogs")
    var results = Array(repeating: Rounds(), count: stubs.count)
    var setups: [(StubTransport, APIClient, APIClient, APIClient, HTTPRequest)] = []
    for stub in stubs {
      let transport = await stub.make()
      let client = APIClient(baseURL: base, transport: transport)
      let untimed = APIClient(
        baseURL: base, transport: transport, configuration: APIClient.Configuration(timeout: nil))
      let listening = APIClient(
        baseURL: base, transport: transport,
        configuration: APIClient.Configuration(eventListeners: [NoOpListener()]))
      setups.append((transport, client, untimed, listening, try client.makeRequest(for: endpoint)))
    }
    let perCall = 1e9 / Double(iterations)
    for _ in 0..<rounds {
      for (index, (transport, client, untimed, listening, request)) in setups.enumerated() {
        var start = now()
        for _ in 0..<iterations { _ = try await transport.send(request) }
        results[index].direct.append((now() - start) * perCall)
        start = now()
        var cpu = cpuSeconds()
        for _ in 0..<iterations { _ = try await client.send(endpoint) }
        results[index].timed.append((now() - start) * perCall)
        results[index].timedCPU.append((cpuSeconds() - cpu) * perCall)
        start = now()
        for _ in 0..<iterations { _ = try await untimed.send(endpoint) }
        results[index].untimed.append((now() - start) * perCall)
        start = now()
        cpu = cpuSeconds()
        for _ in 0..<iterations { _ = try await listening.send(endpoint) }
        results[index].listening.append((now() - start) * perCall)
        results[index].listeningCPU.append((cpuSeconds() - cpu) * perCall)
      }
    }
    return results
  }
}

/// Decoding a 1 MB body through `send` against `JSONDecoder` alone, and two at once against one.
enum Decoding {
  /// Per round: `send`'s speed over `JSONDecoder`'s, and two concurrent sends' speedup over one,
  /// each from the median of `repeats` timings in that round.
  struct Rounds {
    var bytes = 0
    var decoder: [Double] = []
    var send: [Double] = []
    var ratio: [Double] = []
    var speedup: [Double] = []
  }

  static func run(rounds: Int, repeats: Int = 5) async throws -> Rounds {
    let body = try dogsJSON(count: 12_000)
    let stub = StubTransport { _ in .status(200, body: body) }
    let client = APIClient(baseURL: URL(string: "https://api.example.com/v1")!, transport: stub)
    let endpoint = Endpoint<[Dog]>(path: "dogs")
    var result = Rounds(bytes: body.count)
    let megabytes = Double(body.count) / 1_000_000
    _ = try await client.send(endpoint)
    for _ in 0..<rounds {
      var alone: [Double] = []
      var single: [Double] = []
      var pair: [Double] = []
      for _ in 0..<repeats {
        var start = now()
        _ = try JSONDecoder().decode([Dog].self, from: body)
        alone.append(now() - start)
        start = now()
        _ = try await client.send(endpoint)
        single.append(now() - start)
        start = now()
        async let first = client.send(endpoint)
        async let second = client.send(endpoint)
        _ = try await (first, second)
        pair.append(now() - start)
      }
      result.decoder.append(megabytes / median(alone))
      result.send.append(megabytes / median(single))
      result.ratio.append(median(alone) / median(single))
      result.speedup.append(2 * median(single) / median(pair))
    }
    return result
  }
}
