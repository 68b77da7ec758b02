import Errand
import Foundation

/// The checks every `Transport` must pass, run against an httpbin-compatible server: statuses
/// passed through, headers and bodies byte-exact, empty and large bodies, failures thrown and
/// cancellation honoured.
///
/// A transport author runs them in a few lines:
///
/// ```swift
/// @Test(arguments: TransportConformance.checks)
/// func myTransportConforms(_ check: TransportConformance.Check) async throws {
///   try await check.run(MyTransport(), httpbin: URL(string: "http://127.0.0.1:8080")!)
/// }
/// ```
///
/// `StubTransport.httpbin()` answers the same endpoints without a network.
public enum TransportConformance {
  /// One check.
  public struct Check: Sendable, CustomStringConvertible {
    /// What it checks, for example `status codes pass through`.
    public let description: String
    let body: @Sendable (any Transport, URL, URL) async throws -> Void

    /// Run the check, in a task of high priority: the checks that time a deadline or a
    /// cancellation measure when the call returns, and in a test run that starts hundreds of
    /// tests at once, a call's return at the default priority would wait behind all of them for
    /// a thread of the cooperative pool (seconds on a 2-core machine). Cancelling the calling
    /// task cancels the check.
    /// - Parameters:
    ///   - transport: The transport under test.
    ///   - httpbin: The base URL of an httpbin-compatible server.
    ///   - unreachable: A URL where nothing listens; `http://127.0.0.1:9` by default.
    /// - Throws: ``ConformanceFailure`` saying what the transport did wrong.
    public func run(
      _ transport: any Transport, httpbin: URL,
      unreachable: URL = URL(string: "http://127.0.0.1:9/")!
    ) async throws(ConformanceFailure) {
      let description = description
      let body = body
      let check = Task(priority: .high) { () async -> ConformanceFailure? in
        do {
          try await body(transport, httpbin, unreachable)
          return nil
        } catch let failure as ConformanceFailure {
          return failure
        } catch {
          return ConformanceFailure("\(description): \(error)")
        }
      }
      let failure = await withTaskCancellationHandler {
        await check.value
      } onCancel: {
        check.cancel()
      }
      if let failure {
        throw failure
      }
    }
  }

  /// Every check.
  public static let checks: [Check] = [
    Check(description: "status codes pass through") { transport, base, _ in
      for status in [200, 201, 202, 204, 400, 401, 404, 418, 500, 503] {
        let response = try await send(
          transport, HTTPRequest(url: base.appendingPathComponent("status/\(status)")))
        try expect(
          response.status == status, "GET /status/\(status) came back as \(response.status)")
      }
    },
    Check(description: "request headers arrive byte for byte") { transport, base, _ in
      let value = "tab\tseparated; quoted=\"yes\"; unicode? no, ASCII only"
      let response = try await send(
        transport,
        HTTPRequest(url: base.appendingPathComponent("headers"), headers: ["X-Errand-Check": value])
      )
      let echoed = try object(response.body)["headers"] as? [String: Any]
      try expect(
        echoed?["X-Errand-Check"] as? String == value,
        "X-Errand-Check came back as \(String(describing: echoed?["X-Errand-Check"]))")
    },
    Check(description: "request bodies arrive byte for byte") { transport, base, _ in
      let body = "{\"name\":\"Rex 🐕\",\"note\":\"line\\nbreak\"}"
      let request = HTTPRequest(
        method: .post, url: base.appendingPathComponent("anything"),
        headers: ["Content-Type": "application/json"],
        body: Data(body.utf8))
      let echoed = try object(try await send(transport, request).body)["data"] as? String
      try expect(echoed == body, "POST /anything echoed \(String(describing: echoed))")
    },
    Check(description: "response bodies arrive byte for byte") { transport, base, _ in
      try await expectRange(transport, base, count: 1024)
    },
    Check(description: "large response bodies arrive whole") { transport, base, _ in
      try await expectRange(transport, base, count: 100 * 1024)
    },
    Check(description: "empty bodies stay empty") { transport, base, _ in
      let response = try await send(
        transport, HTTPRequest(url: base.appendingPathComponent("status/204")))
      try expect(
        response.status == 204 && response.body.isEmpty,
        "GET /status/204 gave \(response.body.count) bytes")
    },
    Check(description: "network failures are thrown") { transport, _, unreachable in
      do {
        let response = try await transport.send(HTTPRequest(url: unreachable, timeout: .seconds(5)))
        throw ConformanceFailure(
          "a request to \(unreachable.absoluteString) returned \(response.status) instead of throwing"
        )
      } catch let failure as ConformanceFailure {
        throw failure
      } catch {
        let mapped = APIError(transportError: error, request: nil).kind
        try expect(mapped == .transport, "the error \(error) maps to \(mapped), not transport")
      }
    },
    Check(description: "cancellation is honoured") { transport, base, _ in
      let request = HTTPRequest(url: base.appendingPathComponent("delay/10"))
      let call = Task { try await transport.send(request) }
      try? await Task.sleep(for: .milliseconds(200))
      let start = ContinuousClock.now
      call.cancel()
      let result = await call.result
      let elapsed = ContinuousClock.now - start
      guard case .failure(let error) = result else {
        throw ConformanceFailure("a cancelled request to /delay/10 returned a response")
      }
      try expect(
        APIError(transportError: error, request: nil).kind == .cancelled,
        "a cancelled request threw \(error)")
      // The server answers at 10 s; the margin is for a loaded machine.
      try expect(elapsed < .seconds(9), "a cancelled request took \(elapsed) to end")
    },
  ]

  /// The streaming checks: order, the size limit crossed mid-body, and a reader that stops.
  public static let streamingChecks: [Check] = [
    Check(description: "streamed chunks arrive in order") { transport, base, _ in
      let head = try await transport.stream(
        HTTPRequest(url: base.appendingPathComponent("stream/5")))
      try expect(head.status == 200, "GET /stream/5 came back as \(head.status)")
      let body = try await head.collectingBody().body
      let ids = String(decoding: body, as: UTF8.self).split(separator: "\n").map {
        (try? object(Data($0.utf8)))?["id"] as? Int
      }
      try expect(ids == [0, 1, 2, 3, 4], "GET /stream/5 streamed ids \(ids)")
    },
    Check(description: "a body over the size limit fails as it crosses it") { transport, base, _ in
      var request = HTTPRequest(url: base.appendingPathComponent("stream-bytes/20000"))
      request.url = URL(string: request.url.absoluteString + "?chunk_size=1000")!
      request.maximumResponseSize = 5000
      var received = 0
      do {
        let head = try await transport.stream(request)
        for try await chunk in head.streamingBody().bodyStream ?? HTTPBody(Data()) {
          received += chunk.count
        }
        throw ConformanceFailure("a 20000-byte body went through a 5000-byte limit")
      } catch let failure as ConformanceFailure {
        throw failure
      } catch {
        try expect(
          (error as? URLError)?.code == .dataLengthExceedsMaximum,
          "crossing the size limit threw \(error), not URLError(.dataLengthExceedsMaximum)")
        try expect(received <= 5000, "\(received) bytes were read past a 5000-byte limit")
      }
    },
    Check(description: "cancelling a stream ends it at once") { transport, base, _ in
      var request = HTTPRequest(url: base.appendingPathComponent("drip"))
      request.url = URL(string: request.url.absoluteString + "?numbytes=10&duration=10&delay=0")!
      let head = try await transport.stream(request)
      let body = head.streamingBody().bodyStream ?? HTTPBody(Data())
      var chunks = body.makeAsyncIterator()
      _ = try await chunks.next()
      let start = ContinuousClock.now
      body.cancel()
      do {
        while try await chunks.next() != nil {}
        throw ConformanceFailure("a cancelled stream went on to its end")
      } catch let failure as ConformanceFailure {
        throw failure
      } catch {
        let elapsed = ContinuousClock.now - start
        try expect(error is CancellationError, "a cancelled stream threw \(error)")
        // The last byte would come 9 s after the first; the margin is for a loaded machine.
        try expect(elapsed < .seconds(8), "a cancelled stream took \(elapsed) to end")
      }
    },
  ]

  static func send(_ transport: any Transport, _ request: HTTPRequest) async throws
    -> HTTPResponse
  {
    do {
      return try await transport.send(request)
    } catch {
      throw ConformanceFailure("\(request) threw \(error)")
    }
  }

  private static func expectRange(_ transport: any Transport, _ base: URL, count: Int) async throws
  {
    let response = try await send(
      transport, HTTPRequest(url: base.appendingPathComponent("range/\(count)")))
    let alphabet = Array("abcdefghijklmnopqrstuvwxyz".utf8)
    let expected = Data((0..<count).map { alphabet[$0 % 26] })
    try expect(
      response.body == expected, "GET /range/\(count) gave \(response.body.count) bytes that differ"
    )
  }

  static func object(_ body: Data) throws -> [String: Any] {
    guard let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] else {
      throw ConformanceFailure(
        "the body is not a JSON object: \(String(decoding: body.prefix(200), as: UTF8.self))")
    }
    return object
  }

  static func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    if !condition {
      throw ConformanceFailure(message())
    }
  }
}

/// What a transport did wrong in a ``TransportConformance`` check.
public struct ConformanceFailure: Error, CustomStringConvertible {
  /// What went wrong.
  public var description: String

  init(_ description: String) {
    self.description = description
  }
}
