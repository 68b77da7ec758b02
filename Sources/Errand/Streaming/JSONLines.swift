import Foundation

/// The values of a JSON Lines (`application/jsonl`, NDJSON) response, one per line, decoded as
/// they arrive; blank lines are skipped. Returned by ``APIClient/jsonLines(_:)``.
///
/// A line that does not decode ends the iteration with ``APIError/decoding(_:_:)`` whose
/// underlying error is a ``JSONLineError`` naming the line.
public struct JSONLines<Value: Decodable & Sendable>: AsyncSequence, Sendable {
  /// A decoded line.
  public typealias Element = Value

  /// The stream the lines are read from: its head, and ``ResponseStream/cancel()`` to stop.
  public let stream: ResponseStream
  let decoder: JSONDecoder

  /// Reads and decodes the lines in order.
  public struct AsyncIterator: AsyncIteratorProtocol {
    var lines: ResponseLines.AsyncIterator
    let stream: ResponseStream
    let decoder: JSONDecoder
    var number = 0

    /// The next value, or `nil` after the last line.
    /// - Returns: The value.
    /// - Throws: ``APIError``.
    public mutating func next() async throws -> Value? {
      while let line = try await lines.next() {
        number += 1
        guard line.contains(where: { !$0.isWhitespace }) else { continue }
        do {
          return try decoder.decode(Value.self, from: Data(line.utf8))
        } catch {
          stream.cancel()
          var response = stream.response
          response.body = Data(line.utf8)
          throw APIError.decoding(JSONLineError(line: number, underlying: error), response)
        }
      }
      return nil
    }
  }

  /// An iterator over the values.
  /// - Returns: The iterator.
  public func makeAsyncIterator() -> AsyncIterator {
    AsyncIterator(lines: stream.lines.makeAsyncIterator(), stream: stream, decoder: decoder)
  }
}

/// A line of a JSON Lines body that did not decode.
public struct JSONLineError: Error, Sendable, CustomStringConvertible {
  /// The line's number, counting from 1 (blank lines included).
  public var line: Int
  /// Why it did not decode.
  public var underlying: any Error

  /// Which line, and why, for example `line 3: [0].name: expected String, found a number`.
  public var description: String {
    "line \(line): \(APIError.describe(underlying))"
  }
}
