import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// Values a server or a caller hands Errand that cannot go back on the wire (a control byte in a
/// validator, an event ID or a `tracestate`) are dropped, never sent: no URL, stream or client
/// fails for good because of one. And an event stream never comes from a cache.
@Suite(.timeLimit(.minutes(3))) struct UnsendableValuesHostileTests {
  static let dogs = Endpoint<Data>(path: "dogs", decoding: .data)

  @Test(arguments: [
    ("ETag", "\"a\u{01}b\""), ("ETag", "\"a\u{7F}b\""), ("ETag", "\"a\rb\""),
    ("Last-Modified", "Tue, 01 Dec 2026\u{0B} 10:00:00 GMT"),
  ])
  func aValidatorThatCannotBeSentIsNotStored(name: String, value: String) async throws {
    let folder = FileManager.default.temporaryDirectory
      .appendingPathComponent("errand-validator-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    let stub = StubTransport { _ in
      .status(200, body: Data("[]".utf8), headers: [name: value, "Cache-Control": "max-age=0"])
    }
    // Memory and disk, and a second cache on the same folder (a restart).
    for cache in [HTTPCache(directory: folder), HTTPCache(directory: folder)] {
      let client = APIClient(
        baseURL: base, transport: stub,
        configuration: APIClient.Configuration(middleware: [CachingMiddleware(cache: cache)]))
      for _ in 0..<2 {
        let body = try await client.send(Self.dogs)
        #expect(body == Data("[]".utf8))
      }
    }
    let sent = await stub.requests
    #expect(sent.count == 4)
    #expect(sent.allSatisfy { $0.headers["If-None-Match"] == nil })
    #expect(sent.allSatisfy { $0.headers["If-Modified-Since"] == nil })
  }

  @Test(arguments: ["a\u{01}b", "a\u{7F}b", "a\u{1B}[31mb"])
  func anEventIDThatCannotBeSentIsLeftOutOfTheReconnection(id: String) async throws {
    let clock = TestClock()
    let stub = StubTransport()
    await stub.on(
      .get, "/v1/feed",
      .sequence([
        .events([ServerSentEvent(data: "a", id: id, retry: .seconds(1))]), .status(204),
      ]))
    let client = APIClient(
      baseURL: base, transport: stub, configuration: APIClient.Configuration(clock: clock))
    let events = client.events(Endpoint<Data>(path: "feed", decoding: .data), reconnect: .default)
    let reading = Task {
      var received: [ServerSentEvent] = []
      for try await event in events { received.append(event) }
      return received
    }
    // The first reconnection waits the server's `retry` exactly (no backoff, no jitter yet).
    try #require(await clock.waitForSleeper(dueIn: .seconds(1)))
    await clock.advance(by: .seconds(1))
    let received = try await reading.cancellableValue
    #expect(received.map(\.data) == ["a"])
    #expect(received.first?.id == id, "the caller still reads the ID as sent")
    let sent = await stub.requests(matching: .any)
    #expect(sent.map { $0.headers["Last-Event-ID"] } == [nil, nil])
  }

  @Test(
    arguments: [
      ("v=1,\r\nX-Injected: 1", "v=1"),
      ("v=1, w=2\u{00}", "v=1"),
      ("  a=1 ,\tb=2  ", "a=1,b=2"),
      (",,,", nil),
      ("not-a-member", nil),
    ] as [(String, String?)])
  func aTracestateKeepsOnlyMembersThatCanBeSent(state: String, kept: String?) throws {
    let context = try #require(
      TraceContext(
        traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", tracestate: state))
    #expect(context.state == kept)
  }

  @Test func aTracestateKeepsAtMostThirtyTwoMembers() throws {
    let members = (0..<4000).map { "vendor\($0)=value\($0)" }
    let context = try #require(
      TraceContext(
        traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        tracestate: members.joined(separator: ",")))
    #expect(context.state == members.prefix(32).joined(separator: ","))
    #expect(TraceContext.maximumStateMembers == 32)
  }

  @Test(arguments: ["\u{A0}", "\u{2003}", "\u{FEFF}"])
  func aTraceparentWithAUnicodeSpaceIsNotValid(space: String) {
    let valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    #expect(TraceContext(traceparent: " \t" + valid + "\t ") != nil)
    #expect(TraceContext(traceparent: space + valid) == nil)
    #expect(TraceContext(traceparent: valid + space) == nil)
  }

  /// A caller's `tracestate` with CR/LF once failed every outgoing call.
  @Test func aCallersBadTracestateDoesNotFailTheCall() async throws {
    let stub = StubTransport { _ in .status(200) }
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(middleware: [TraceContextMiddleware()]))
    let incoming = try #require(
      TraceContext(
        traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        tracestate: "good=1,bad=\r\nX-Evil: yes"))
    try await TraceContext.$current.withValue(incoming) {
      _ = try await client.send(Self.dogs)
    }
    let sent = try await stub.nextRequest()
    #expect(sent.headers["tracestate"] == "good=1")
    #expect(sent.headers["X-Evil"] == nil)
  }

  @Test(arguments: [true, false])
  func anEventStreamIsNeverAnsweredFromACache(reconnecting: Bool) async throws {
    let clock = TestClock()
    let stub = StubTransport { _ in
      .status(
        200, body: Data("id: 1\ndata: once\n\n".utf8),
        headers: ["Content-Type": "text/event-stream", "Cache-Control": "max-age=60"])
    }
    let client = APIClient(
      baseURL: base, transport: stub,
      // No timeout: the only task that sleeps on the clock is the stream's wait to reconnect
      // (a read's idle timeout would be another, which a slow run may see first).
      configuration: APIClient.Configuration(
        timeout: nil, middleware: [CachingMiddleware(cache: HTTPCache())], clock: clock))
    let feed = Endpoint<Data>(path: "feed", decoding: .data)
    if reconnecting {
      let events = client.events(feed, reconnect: .default)
      let reading = Task {
        var count = 0
        for try await _ in events { count += 1 }
        return count
      }
      // The first connection reaches the server, the stream waits (on the clock), and the
      // reconnection reaches the server too (a cached stream answered it from the store).
      _ = try await stub.nextRequest()
      try #require(await clock.waitForSleepers(1))
      await clock.advance(by: .seconds(3600))
      _ = try await stub.nextRequest()
      reading.cancel()
      _ = try? await reading.value
    } else {
      for _ in 0..<3 {
        for try await _ in try await client.events(feed) {}
      }
    }
    let sent = await stub.requests
    #expect(sent.count >= (reconnecting ? 2 : 3), "every connection reaches the server")
    #expect(sent.dropFirst().allSatisfy { $0.headers["If-None-Match"] == nil })
  }
}
