import Errand
import ErrandStubs
import Foundation

/// What `APIClient.send` adds over calling its transport directly, with a stub transport so the
/// network does not count.
enum Overhead {
  /// Nanoseconds per request: the stub alone, and through the client.
  static func run(iterations: Int, rounds: Int) async throws -> (
    direct: Double, client: Double, clientNoTimeout: Double
  ) {
    let stub = StubTransport { _ in .status(200, body: Data("{}".utf8)) }
    let base = URL(string: "https://api.example.com/v1")!
    let client = APIClient(baseURL: base, transport: stub)
    let untimed = APIClient(
      baseURL: base, transport: stub, configuration: APIClient.Configuration(timeout: nil))
    let endpoint = Endpoint<Data>(path: "dogs")
    let request = try client.makeRequest(for: endpoint)
    var direct: [Double] = []
    var through: [Double] = []
    var throughUntimed: [Double] = []
    for _ in 0..<rounds {
      var start = now()
      for _ in 0..<iterations { _ = try await stub.send(request) }
      direct.append((now() - start) * 1e9 / Double(iterations))
      start = now()
      for _ in 0..<iterations { _ = try await client.send(endpoint) }
      through.append((now() - start) * 1e9 / Double(iterations))
      start = now()
      for _ in 0..<iterations { _ = try await untimed.send(endpoint) }
      throughUntimed.append((now() - start) * 1e9 / Double(iterations))
    }
    return (median(direct), median(through), median(throughUntimed))
  }
}

/// Decoding a 1 MB body through `send` against `JSONDecoder` alone, and two at once against one.
enum Decoding {
  static func run(rounds: Int) async throws -> (
    bytes: Int, decoder: Double, send: Double, speedup: Double
  ) {
    let body = try dogsJSON(count: 12_000)
    let stub = StubTransport { _ in .status(200, body: body) }
    let client = APIClient(baseURL: URL(string: "https://api.example.com/v1")!, transport: stub)
    let endpoint = Endpoint<[Dog]>(path: "dogs")
    var alone: [Double] = []
    var sent: [Double] = []
    var single: [Double] = []
    var pair: [Double] = []
    _ = try await client.send(endpoint)
    for _ in 0..<rounds {
      var start = now()
      _ = try JSONDecoder().decode([Dog].self, from: body)
      alone.append(now() - start)
      start = now()
      _ = try await client.send(endpoint)
      sent.append(now() - start)
      single.append(now() - start)
      start = now()
      async let first = client.send(endpoint)
      async let second = client.send(endpoint)
      _ = try await (first, second)
      pair.append(now() - start)
    }
    let megabytes = Double(body.count) / 1_000_000
    return (
      body.count, megabytes / median(alone), megabytes / median(sent),
      2 * median(single) / median(pair)
    )
  }
}
