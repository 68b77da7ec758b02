import Foundation

/// A response whose body is read as it arrives: the head first (status validated), then the body
/// in chunks, in arrival order. Returned by ``APIClient/stream(_:)``.
///
/// ```swift
/// let stream = try await client.stream(Endpoint<Data>(path: "events", decoding: .data))
/// print(stream.response.status)
/// for try await chunk in stream { consume(chunk) }      // or: for try await line in stream.lines
/// ```
///
/// Iterating throws ``APIError`` exactly as ``APIClient/send(_:)`` does: `.timedOut` when no
/// chunk arrives within the request's timeout (the timeout bounds the wait for the head, then each
/// wait for the next chunk, never the whole of a long-lived stream), `.cancelled` when the
/// iterating task is cancelled or the call's client cancels it (``APIClient/cancelAll()``: from
/// then on nothing more is read, not even the lines or events already split off a chunk),
/// `.transport` when the connection is lost mid-body or the body
/// crosses the maximum response size. A stream never ends silently short. It is read once:
/// leaving a loop over it early (`break`, a thrown error), dropping it, or calling ``cancel()``
/// before the end cancels the request.
public struct ResponseStream: AsyncSequence, Sendable {
  /// A chunk of the body.
  public typealias Element = Data

  /// The response's head: status, headers and URL; its body is empty.
  public let response: HTTPResponse
  /// The request that was sent, after the middleware changed it.
  public let request: HTTPRequest
  /// The body as it arrives. Internal: read it by iterating the stream, which applies the idle
  /// timeout, the size limit and the mapping to ``APIError``.
  let body: HTTPBody
  /// What is known of the transfer: once the stream has been read to its end, the whole
  /// transfer's metrics (its end, every byte of the body) when the transport reports them
  /// (``HTTPBody/metrics``); until then, for a stream left or failed before its end, and from a
  /// transport that does not report them, the head's (``HTTPResponse/metrics`` of ``response``,
  /// taken when the head arrived).
  public var metrics: TransferMetrics? {
    body.metrics?.completing(head: response.metrics) ?? response.metrics
  }
  /// The body's announced length (`Content-Length`), when the server sent one.
  public var expectedLength: Int? { body.expectedLength }
  /// The longest line ``lines`` and ``JSONLines`` hold, and the longest event
  /// ``ServerSentEvents`` holds, in bytes, before they throw ``LineTooLongError``; the client's
  /// ``APIClient/Configuration/maximumLineLength`` (1 MiB by default) unless changed here. The
  /// stream's total length is not limited by it.
  public var maximumLineLength: Int
  let idleTimeout: Duration?
  let clock: any Clock<Duration>
  /// Where the call's body progress and end go, when its client has listeners.
  var events: CallEventSink?
  /// The call's place among its client's calls (``APIClient/inFlight``), left at the body's end.
  var registration: CallRegistration?

  init(
    response: HTTPResponse, request: HTTPRequest, body: HTTPBody, idleTimeout: Duration?,
    clock: any Clock<Duration>,
    maximumLineLength: Int = APIClient.Configuration.defaultMaximumLineLength
  ) {
    self.response = response
    self.request = request
    self.body = body
    self.idleTimeout = idleTimeout
    self.clock = clock
    self.maximumLineLength = maximumLineLength
  }

  /// Stop reading and cancel the request.
  public func cancel() {
    body.cancel()
    events?.failed(CancellationError())
    registration?.end()
  }

  /// The body's lines as UTF-8 text, without their `\n` or `\r\n` endings; a last line without an
  /// ending is included.
  public var lines: ResponseLines {
    ResponseLines(stream: self)
  }

  /// Read the rest of the body into memory, up to the request's maximum response size.
  /// - Returns: The bytes.
  /// - Throws: ``APIError``, as iterating does.
  public func collect() async throws -> Data {
    var collected = Data()
    for try await chunk in self {
      collected.append(chunk)
    }
    return collected
  }

  /// Reads the chunks in order, each within the idle timeout. When the last copy of an iterator
  /// goes away (a loop ends or is left early), the request is cancelled if the body has not ended.
  public struct AsyncIterator: AsyncIteratorProtocol {
    let stream: ResponseStream
    let reading: Reading

    init(stream: ResponseStream) {
      self.stream = stream
      self.reading = Reading(stream.body, events: stream.events, registration: stream.registration)
    }

    /// The next chunk, or `nil` at the end of the body.
    /// - Returns: The chunk.
    /// - Throws: ``APIError``.
    public mutating func next() async throws -> Data? {
      let body = stream.body
      do {
        let chunk = try await body.buffer.next(idleTimeout: stream.idleTimeout, clock: stream.clock)
        // At the end the call leaves its client's list; one its client cancelled first (as the
        // body ended) ends as cancelled, as `cancelAll()` counted it.
        if chunk == nil, stream.registration?.finish() == true {
          throw CancellationError()
        }
        if let events = stream.events {
          if let chunk {
            events.bodyChunk(chunk.count)
          } else {
            events.ended(stream.response.withMetrics(atEndOf: body), streamed: true)
          }
        }
        return chunk
      } catch {
        throw fail(error)
      }
    }

    /// End the read with `error` (cancelling the body), as the error the reader gets:
    /// ``APIError/cancelled(_:)`` when the stream's client cancelled it, whatever `error` is.
    private func fail(_ error: any Error) -> APIError {
      stream.body.cancel()
      let cancelled = stream.registration?.finish() ?? false
      let failure =
        cancelled
        ? CallRegistration.cancelled(stream.request)
        : APIError(transportError: error, request: stream.request)
      stream.events?.failed(failure)
      return failure
    }

    /// Throw ``APIError/cancelled(_:)``, ending the read, when the stream's client cancelled it
    /// (``APIClient/cancelAll()``): for a reader about to return what it split off a chunk read
    /// before (a line, an event), so that nothing more of the call is read after the cancel.
    func checkCancelledByClient() throws {
      guard let registration = stream.registration, registration.isCancelled else { return }
      throw fail(CancellationError())
    }

    /// ``checkCancelledByClient()``, for a reader holding `ready` items it split off a chunk
    /// read before: when the client cancelled the call, they are dropped and the read ends.
    func checkCancelledByClient<Item>(dropping ready: inout [Item]) throws {
      guard !ready.isEmpty else { return }
      do {
        try checkCancelledByClient()
      } catch {
        ready = []
        throw error
      }
    }
  }

  /// An iterator over the chunks.
  /// - Returns: The iterator.
  public func makeAsyncIterator() -> AsyncIterator {
    AsyncIterator(stream: self)
  }

  /// Cancels the body when the iteration that owns it goes away; harmless once the body ended.
  final class Reading: Sendable {
    let body: HTTPBody
    let events: CallEventSink?
    let registration: CallRegistration?

    init(_ body: HTTPBody, events: CallEventSink?, registration: CallRegistration?) {
      self.body = body
      self.events = events
      self.registration = registration
    }

    deinit {
      body.cancel()
      // A call whose body was left before its end was cancelled (no event once it ended).
      events?.failed(CancellationError())
      registration?.end()
    }
  }
}

/// The lines of a ``ResponseStream``, as UTF-8 text (invalid bytes read as U+FFFD).
public struct ResponseLines: AsyncSequence, Sendable {
  /// A line, without its ending.
  public typealias Element = String

  let stream: ResponseStream

  /// Reads the lines in order.
  public struct AsyncIterator: AsyncIteratorProtocol {
    var chunks: ResponseStream.AsyncIterator
    var splitter: LineSplitter
    /// Lines split off but not returned yet, last first.
    var ready: [String] = []
    var ended = false

    /// The next line, or `nil` after the last.
    /// - Returns: The line.
    /// - Throws: ``APIError``, as the stream does; ``APIError/transport(_:)`` with a
    ///   ``LineTooLongError`` for a line longer than ``ResponseStream/maximumLineLength``.
    public mutating func next() async throws -> String? {
      // Split off a chunk read before: not returned once the call's client cancelled it.
      try chunks.checkCancelledByClient(dropping: &ready)
      while ready.isEmpty {
        if ended { return nil }
        if let chunk = try await chunks.next() {
          do {
            ready = try splitter.push(chunk).reversed()
          } catch {
            chunks.stream.cancel()
            throw APIError.transport(error)
          }
        } else {
          ended = true
          if let last = splitter.finish() {
            ready = [last]
          }
        }
      }
      return ready.popLast()
    }
  }

  /// An iterator over the lines.
  /// - Returns: The iterator.
  public func makeAsyncIterator() -> AsyncIterator {
    AsyncIterator(
      chunks: stream.makeAsyncIterator(),
      splitter: LineSplitter(maximumLength: stream.maximumLineLength))
  }
}
