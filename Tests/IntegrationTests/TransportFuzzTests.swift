import Errand
import ErrandTesting
import Foundation
import LoopbackServer
import TestSupport
import Testing

/// Random requests (odd paths and queries, custom headers, bodies of every size up to 70 KB) sent
/// through each transport to a server that records them: what arrives is what was sent. Small by
/// default; full size with `ERRAND_FULL_SIZE=1` (``TestSize``).
@Suite(.timeLimit(.minutes(5))) struct TransportFuzzTests {
  static let pieces = [
    "a", "Z", "9", " ", "%", "?", "#", "&", "=", "+", ";", ",", "é", "🐕", "~", "'",
  ]

  static func text(_ random: inout SeededGenerator, maximum: Int) -> String {
    (0..<Int.random(in: 1...maximum, using: &random)).map { _ in
      pieces.randomElement(using: &random) ?? "a"
    }.joined()
  }

  static func endpoint(_ random: inout SeededGenerator) -> Endpoint<Data> {
    let method =
      [HTTPMethod.get, .post, .put, .patch, .delete].randomElement(using: &random) ?? .get
    let path = (0..<Int.random(in: 1...3, using: &random)).map { _ in text(&random, maximum: 6) }
      .joined(separator: "/")
    let query = (0..<Int.random(in: 0...3, using: &random)).map { _ in
      URLQueryItem(name: text(&random, maximum: 4), value: text(&random, maximum: 6))
    }
    var headers = HTTPHeaders()
    for index in 0..<Int.random(in: 0...4, using: &random) {
      // Printable, no surrounding spaces: what a header value can carry unchanged.
      let value = (0..<Int.random(in: 1...20, using: &random)).map { _ in
        String(UnicodeScalar(UInt8.random(in: 0x21...0x7E, using: &random)))
      }.joined()
      headers.add("X-Fuzz-\(index)", value)
    }
    var body: RequestBody?
    if [.post, .put, .patch].contains(method) {
      let size = [0, 1, 100, 16_384, 70_000].randomElement(using: &random) ?? 0
      body = .data(
        Data((0..<size).map { _ in UInt8.random(in: 0...255, using: &random) }),
        contentType: "application/octet-stream")
    }
    return Endpoint<Data>(
      method: method, path: path, query: query, headers: headers, body: body, decoding: .data)
  }

  @Test(arguments: [UInt64(1), 2, 3], TransportKind.allCases)
  func whatArrivesIsWhatWasSent(seed: UInt64, _ transport: TransportKind) async throws {
    var random = SeededGenerator(seed: seed)
    let server = try LoopbackServer { request in
      ScriptedResponse(headers: [("X-Target", request.target)], body: request.body)
    }
    defer { server.stop() }
    let client = transport.client(server.baseURL)
    for _ in 0..<TestSize.count(small: 20, full: 60) {
      let endpoint = Self.endpoint(&random)
      let response = try await client.response(for: endpoint)
      let request = response.request
      let expectedTarget =
        request.url.path(percentEncoded: true)
        + (request.url.query(percentEncoded: true).map { "?" + $0 } ?? "")
      #expect(response.response.headers["X-Target"] == expectedTarget)
      #expect(response.value == (request.body ?? Data()), "\(request)")
      let received = try #require(server.requests.last)
      #expect(received.method == request.method.rawValue)
      for field in request.headers where field.name.hasPrefix("X-Fuzz") {
        #expect(received.headers[field.name] == field.value, "\(field.name)")
      }
    }
  }
}
