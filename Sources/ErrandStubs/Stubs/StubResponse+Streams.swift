import Errand
import Foundation

/// A streamed answer: the head at once, then the chunks `interval` apart on the stub's clock,
/// then the end or a failure.
struct StubStream: Sendable {
  var head: HTTPResponse
  var chunks: [Data]
  var interval: Duration
  var failure: (any Error)?
  /// After the last chunk, the body never ends: only cancellation or a deadline stops it.
  var stalls = false
}

extension StubResponse {
  /// A body that arrives in chunks: the first with the head, each next one `interval` later on
  /// the stub's clock (a ``TestClock`` makes long streams take no wall time), then the end, or
  /// `failure` after the last chunk: a stream cut short.
  ///
  /// ```swift
  /// await stub.on(.get, "/v1/big", .chunks([Data("a".utf8), Data("b".utf8)], interval: .milliseconds(10)))
  /// await stub.on(.get, "/v1/cut", .chunks([Data("a".utf8)], failingWith: URLError(.networkConnectionLost)))
  /// ```
  /// Sent with `send`, the stub waits for every chunk and answers with the whole body (or throws
  /// the failure); streamed, each chunk arrives on its own.
  /// - Parameters:
  ///   - chunks: The body's chunks, in order.
  ///   - interval: The wait before each chunk after the first.
  ///   - status: The status code.
  ///   - headers: The header fields.
  ///   - failure: The error that ends the body after the last chunk, if any.
  /// - Returns: The answer.
  public static func chunks(
    _ chunks: [Data], interval: Duration = .zero, status: Int = 200, headers: HTTPHeaders = [:],
    failingWith failure: (any Error)? = nil
  ) -> StubResponse {
    StubResponse(
      .stream(
        StubStream(
          head: HTTPResponse(status: status, headers: headers), chunks: chunks,
          interval: interval, failure: failure)))
  }

  /// A Server-Sent Events stream: one event per chunk, `interval` apart on the stub's clock, with
  /// `Content-Type: text/event-stream`.
  ///
  /// ```swift
  /// await stub.on(.get, "/v1/sse", .events([ServerSentEvent(data: "1"), ServerSentEvent(event: "tick", data: "2")], interval: .seconds(1)))
  /// ```
  /// - Parameters:
  ///   - events: The events, in order.
  ///   - interval: The wait before each event after the first.
  ///   - failure: The error that ends the stream after the last event, if any.
  /// - Returns: The answer.
  public static func events(
    _ events: [ServerSentEvent], interval: Duration = .zero, failingWith failure: (any Error)? = nil
  ) -> StubResponse {
    .chunks(
      ServerSentEvent.wireFormat(of: events).map { Data($0.utf8) }, interval: interval,
      headers: ["Content-Type": "text/event-stream", "Cache-Control": "no-cache"],
      failingWith: failure)
  }
}
