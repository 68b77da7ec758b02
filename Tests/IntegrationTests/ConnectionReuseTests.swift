import Errand
import Foundation
import LoopbackServer
import TestSupport
import Testing

/// Both production transports keep connections open between requests to the same server, and
/// open a new one when the server closes its side.
@Suite(.timeLimit(.minutes(3))) struct ConnectionReuseTests {
  @Test(arguments: TransportKind.allCases, [true, false])
  func sequentialRequestsShareAConnectionTheServerKeepsOpen(
    kind: TransportKind, keepsOpen: Bool
  ) async throws {
    // Alternate a sized body and a chunked one, so that each response must be framed exactly for
    // the next one to be read from the same connection.
    let server = try LoopbackServer { request in
      var response = ScriptedResponse.text("answer to \(request.target)")
      if request.target.hasSuffix("chunked") {
        response.chunkSize = 4
      }
      return keepsOpen ? response.keepingConnectionOpen() : response
    }
    defer { server.stop() }
    let transport = kind.make()
    let targets = ["/1", "/2-chunked", "/3", "/4-chunked", "/5"]
    for (index, target) in targets.enumerated() {
      let method: HTTPMethod = index.isMultiple(of: 2) ? .get : .post
      let body = method == .post ? Data("body \(index)".utf8) : nil
      let headers: HTTPHeaders = method == .post ? ["X-Posted": "\(index)"] : [:]
      let response = try await transport.send(
        HTTPRequest(method: method, url: server.url(target), headers: headers, body: body))
      #expect(response.status == 200)
      #expect(String(decoding: response.body, as: UTF8.self) == "answer to \(target)")
    }
    let received = server.requests
    #expect(received.map(\.target) == targets)
    // Nothing of one request (a body, a header) stays for the next on the same connection.
    #expect(received.map(\.method) == ["GET", "POST", "GET", "POST", "GET"])
    #expect(received.map(\.body.count) == [0, 6, 0, 6, 0])
    #expect(received.map { $0.headers["X-Posted"] } == [nil, "1", nil, "3", nil])
    let connections = Set(received.map(\.connection))
    #expect(connections.count == (keepsOpen ? 1 : targets.count))
  }
}
