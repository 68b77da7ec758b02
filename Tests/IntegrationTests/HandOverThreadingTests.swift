import Errand
import Foundation
import LoopbackServer
import TestSupport
import Testing

/// A head and its body are made on the transport's own thread (libcurl's callbacks, URLSession's
/// delegate queue) and read on the caller's. Under ThreadSanitizer (`swift test
/// --sanitize=thread`) this suite reports a data race if that hand-over has no edge the sanitizer
/// sees; in any run it checks that every call gets its own answer, whole.
@Suite(.timeLimit(.minutes(3))) struct HandOverThreadingTests {
  @Test(arguments: TransportKind.allCases, [false, true])
  func everyCallGetsItsOwnHeadAndBody(_ transport: TransportKind, streams: Bool) async throws {
    let server = try LoopbackServer { request in
      ScriptedResponse(headers: [("X-Target", request.target)], body: Data(request.target.utf8))
    }
    defer { server.stop() }
    let client = transport.client(server.baseURL)
    for index in 0..<40 {
      let endpoint = Endpoint<Data>(path: "call/\(index)", decoding: .data)
      let target = "/call/\(index)"
      if streams {
        let stream = try await client.stream(endpoint)
        #expect(stream.response.headers["X-Target"] == target)
        var body = Data()
        for try await chunk in stream { body.append(chunk) }
        #expect(body == Data(target.utf8))
      } else {
        let response = try await client.response(for: endpoint)
        #expect(response.response.headers["X-Target"] == target)
        #expect(response.value == Data(target.utf8))
      }
    }
  }
}
