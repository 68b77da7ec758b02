import Foundation

/// A response body that arrives in chunks, read once, in order, as it arrives: the one form in
/// which every transport hands a body to the client.
///
/// Transports create one with ``makeStream(expectedLength:limit:onCancel:)`` when the head
/// arrives and write each chunk as it comes off the network; ``APIClient/stream(_:)`` hands it to
/// the caller, and buffered calls collect it (each later chunk appended in place). The body counts
/// what is written against its size limit: the write that crosses it ends the body with
/// `URLError(.dataLengthExceedsMaximum)` and stops the transfer. A reader that stops early (drops
/// the body, calls ``cancel()``, or is cancelled while it waits) cancels the request.
///
/// Writing never waits for the reader. Up to ``memoryBudget`` bytes that the reader has not taken
/// yet stay in memory; beyond that they go to an unlinked temporary file and are read back in
/// order, so a slow reader costs disk, not memory. A transport that can pause its transfer does
/// when a write answers ``WriteOutcome/pause``. (URLSession cannot: its `suspend()` restarts the
/// request when resumed, on Linux as on Apple platforms.)
///
/// What a body holds in memory, however far behind its reader is: the budget, and once it
/// writes to its file, a buffer of at most 1 MiB that gathers chunks into one write. What the
/// transport holds before it writes is the transport's: `CurlTransport` pauses (libcurl's buffer
/// of 16 KiB); ``URLSessionTransport`` on Linux holds URLSession to at most 8 MiB of chunks
/// waiting for its delegate. The process's resident size may grow by more than that while a
/// transport works, freed memory that the allocator keeps: ``URLSessionTransport/stream(_:)``
/// has the figures.
///
/// ```swift
/// let (body, writer) = HTTPBody.makeStream(expectedLength: nil, limit: 10_000_000) { task.cancel() }
/// if writer.write(chunk) == .stop { task.cancel() }   // as bytes arrive
/// writer.finish()                                     // or writer.finish(throwing: error)
/// ```
public final class HTTPBody: AsyncSequence, Sendable {
  /// A chunk of bytes.
  public typealias Element = Data

  /// How many unread bytes a body keeps in memory before it buffers to a temporary file.
  public static let memoryBudget = 2 * 1024 * 1024

  /// The body's length when the transport knows it in advance (from `Content-Length`).
  public let expectedLength: Int?
  let buffer: BodyBuffer

  private init(expectedLength: Int?, buffer: BodyBuffer) {
    self.expectedLength = expectedLength
    self.buffer = buffer
  }

  /// A body that is already whole: one chunk, or none when `data` is empty.
  /// - Parameter data: The bytes.
  public convenience init(_ data: Data) {
    let buffer = BodyBuffer(expectedLength: data.count, limit: nil, onCancel: {})
    _ = buffer.write(data)
    buffer.finish(throwing: nil)
    self.init(expectedLength: data.count, buffer: buffer)
  }

  /// A body that a transport writes as bytes arrive.
  /// - Parameters:
  ///   - expectedLength: The length announced by the server, if any.
  ///   - limit: The most bytes the body may have (the request's
  ///     ``HTTPRequest/maximumResponseSize``), or `nil` for no limit. The write that crosses it
  ///     ends the body with `URLError(.dataLengthExceedsMaximum)`, calls `onCancel` and answers
  ///     ``WriteOutcome/stop``; a body announced longer has ended with that error before the
  ///     first write.
  ///   - onCancel: Stops the transfer; runs once, when the reader stops before the end or the
  ///     body crosses its limit.
  /// - Returns: The body to return, and the writer to feed it.
  public static func makeStream(
    expectedLength: Int?, limit: Int? = nil, onCancel: @escaping @Sendable () -> Void
  ) -> (body: HTTPBody, writer: Writer) {
    let buffer = BodyBuffer(expectedLength: expectedLength, limit: limit, onCancel: onCancel)
    return (HTTPBody(expectedLength: expectedLength, buffer: buffer), Writer(buffer: buffer))
  }

  deinit {
    buffer.cancel()
  }

  /// The whole transfer's metrics, once the body has been read to its end and its transport
  /// reported them: its end (``TransferMetrics/responseEnd``) and every byte of the body, where a
  /// streamed call's head (``HTTPResponse/metrics``) has what was known when the head arrived.
  /// `nil` until the reader has had the body's end (even when the transport has finished
  /// writing it), when the body ended with an error (which carries what was known:
  /// ``APIError/metrics``) or was cancelled before its end, and from a transport that reports
  /// none at the end.
  /// ``ResponseStream/metrics`` has them for a streamed call, and a buffered call's response has
  /// them already.
  public var metrics: TransferMetrics? {
    buffer.metrics
  }

  /// Stop reading: the request is cancelled, buffered bytes are dropped, and a reader waiting for
  /// the next chunk throws `CancellationError`.
  public func cancel() {
    buffer.cancel()
  }

  /// Read the rest of the body into memory.
  /// - Parameter maximum: The most bytes to accept; the body's own limit (from
  ///   ``makeStream(expectedLength:limit:onCancel:)``) applies too.
  /// - Returns: The bytes.
  /// - Throws: `URLError(.dataLengthExceedsMaximum)` as soon as the body is longer than `maximum`
  ///   (the request is cancelled), or the error that ended the transfer.
  public func collect(upTo maximum: Int = .max) async throws -> Data {
    if maximum < .max {
      buffer.limit(to: maximum, expectedLength: expectedLength)
    }
    return try await buffer.collect()
  }

  /// Apply the request's size limit, if it has one, to a body the transport made without it.
  func limit(to maximum: Int?) {
    if let maximum {
      buffer.limit(to: maximum, expectedLength: expectedLength)
    }
  }

  /// End the body with `error` and stop its transfer (a call's deadline passed).
  func stop(throwing error: any Error) {
    buffer.stop(throwing: error)
  }

  /// Reads the chunks in order. Iterators share the body: a second one continues where the first
  /// stopped.
  public struct AsyncIterator: AsyncIteratorProtocol {
    let body: HTTPBody

    /// The next chunk, or `nil` at the end of the body.
    /// - Returns: The chunk.
    /// - Throws: The error that ended the transfer, or `CancellationError`.
    public mutating func next() async throws -> Data? {
      try await body.buffer.next()
    }
  }

  /// An iterator over the chunks.
  /// - Returns: The iterator.
  public func makeAsyncIterator() -> AsyncIterator {
    AsyncIterator(body: self)
  }

  /// What a transport does after writing a chunk.
  public enum WriteOutcome: Sendable, Hashable {
    /// Go on writing.
    case proceed
    /// The reader is ``HTTPBody/memoryBudget`` bytes or more behind: a transport that can pause
    /// its transfer should, until ``Writer/whenDrained(_:)`` calls; one that cannot may go on
    /// (the rest is buffered in a temporary file).
    case pause
    /// Stop the transfer: the reader stopped, the body ended, or it crossed its size limit (it
    /// then ended with `URLError(.dataLengthExceedsMaximum)`). The chunk was not taken.
    case stop
  }

  /// Feeds an ``HTTPBody`` as bytes arrive. Calls after ``finish(throwing:)`` are ignored.
  public struct Writer: Sendable {
    let buffer: BodyBuffer

    /// Add a chunk; never waits for the reader. The body counts it against its size limit.
    /// - Parameter chunk: The bytes, in arrival order.
    /// - Returns: Whether to go on, pause or stop the transfer.
    @discardableResult
    public func write(_ chunk: Data) -> WriteOutcome {
      buffer.write(chunk)
    }

    /// End the body: normally, or with the error that cut the transfer short.
    /// - Parameter error: The error, or `nil` when the whole body arrived.
    public func finish(throwing error: (any Error)? = nil) {
      buffer.finish(throwing: error)
    }

    /// End the body normally, with the whole transfer's metrics, which the reader finds in
    /// ``HTTPBody/metrics`` once it has read to the end.
    /// - Parameter metrics: What the transport knows of the transfer, its end included.
    public func finish(metrics: TransferMetrics) {
      buffer.finish(throwing: nil, metrics: metrics)
    }

    /// End the body as `upstream` ended, normally, with its metrics when it has them: for a body
    /// that copies another.
    package func finish(as upstream: HTTPBody) {
      buffer.finish(throwing: nil, metrics: upstream.metrics)
    }

    /// Whether writing is over: the reader stopped, or the body ended (finished, failed, or over
    /// its size limit). A transport stops its transfer when it is.
    public var isStopped: Bool {
      buffer.isStopped
    }

    /// Call `handler` once the reader is less than half a memory budget behind, or collects the
    /// whole body (or the body has ended or been cancelled); at once if it already is.
    /// - Parameter handler: What resumes the paused transfer; runs once, on no particular thread.
    public func whenDrained(_ handler: @escaping @Sendable () -> Void) {
      buffer.whenDrained(handler)
    }
  }
}
