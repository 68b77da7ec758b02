import Foundation

/// A response body that arrives in chunks, read once, in order, as it arrives.
///
/// Transports that stream create one with ``makeStream(expectedLength:onCancel:)`` and write
/// each chunk as it comes off the network; ``APIClient/stream(_:)`` hands it to the caller, and
/// buffered calls collect it. A reader that stops early (drops the body, calls ``cancel()``, or is
/// cancelled while it waits) cancels the request.
///
/// Writing never waits for the reader. Up to ``memoryBudget`` bytes that the reader has not taken
/// yet stay in memory; beyond that they go to an unlinked temporary file and are read back in
/// order, so a slow reader costs disk, not memory. (URLSession cannot pause a transfer: its
/// `suspend()` restarts the request when resumed, on Linux as on Apple platforms.)
///
/// ```swift
/// let (body, writer) = HTTPBody.makeStream(expectedLength: nil) { task.cancel() }
/// writer.write(chunk)      // as bytes arrive
/// writer.finish()          // or writer.finish(throwing: error)
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
    let buffer = BodyBuffer(onCancel: {})
    if !data.isEmpty {
      buffer.write(data)
    }
    buffer.finish(throwing: nil)
    self.init(expectedLength: data.count, buffer: buffer)
  }

  /// A body that a transport writes as bytes arrive.
  /// - Parameters:
  ///   - expectedLength: The length announced by the server, if any.
  ///   - onCancel: Stops the transfer; runs once, when the reader stops before the end.
  /// - Returns: The body to return, and the writer to feed it.
  public static func makeStream(
    expectedLength: Int?, onCancel: @escaping @Sendable () -> Void
  ) -> (body: HTTPBody, writer: Writer) {
    let buffer = BodyBuffer(onCancel: onCancel)
    return (HTTPBody(expectedLength: expectedLength, buffer: buffer), Writer(buffer: buffer))
  }

  deinit {
    buffer.cancel()
  }

  /// Stop reading: the request is cancelled, buffered bytes are dropped, and a reader waiting for
  /// the next chunk throws `CancellationError`.
  public func cancel() {
    buffer.cancel()
  }

  /// Read the rest of the body into memory.
  /// - Parameter maximum: The most bytes to accept.
  /// - Returns: The bytes.
  /// - Throws: `URLError(.dataLengthExceedsMaximum)` as soon as the body is longer than `maximum`
  ///   (the request is cancelled), or the error that ended the transfer.
  public func collect(upTo maximum: Int = .max) async throws -> Data {
    if let expectedLength, expectedLength > maximum {
      cancel()
      throw URLError(.dataLengthExceedsMaximum)
    }
    var collected = Data()
    for try await chunk in self {
      guard chunk.count <= maximum - collected.count else {
        cancel()
        throw URLError(.dataLengthExceedsMaximum)
      }
      collected.append(chunk)
    }
    return collected
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

  /// Feeds an ``HTTPBody`` as bytes arrive. Calls after ``finish(throwing:)`` are ignored.
  public struct Writer: Sendable {
    let buffer: BodyBuffer

    /// Add a chunk; never waits for the reader.
    /// - Parameter chunk: The bytes, in arrival order.
    public func write(_ chunk: Data) {
      buffer.write(chunk)
    }

    /// End the body: normally, or with the error that cut the transfer short.
    /// - Parameter error: The error, or `nil` when the whole body arrived.
    public func finish(throwing error: (any Error)? = nil) {
      buffer.finish(throwing: error)
    }

    /// Whether the reader has stopped, so the transfer may stop too.
    public var isCancelled: Bool {
      buffer.isCancelled
    }

    /// Whether the reader is ``HTTPBody/memoryBudget`` bytes or more behind: a transport that
    /// can pause its transfer should, instead of writing more, until ``whenDrained(_:)`` calls.
    @_spi(Transports) public var isBackedUp: Bool {
      buffer.isBackedUp
    }

    /// Call `handler` once the reader is less than half a memory budget behind (or the body has
    /// ended or been cancelled); at once if it already is.
    /// - Parameter handler: What resumes the paused transfer; runs once, on no particular thread.
    @_spi(Transports) public func whenDrained(_ handler: @escaping @Sendable () -> Void) {
      buffer.whenDrained(handler)
    }
  }
}
