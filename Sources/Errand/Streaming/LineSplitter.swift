import Foundation

/// Splits bytes that arrive in chunks into UTF-8 lines, keeping an unfinished line (and a `\r`
/// that may be half of a `\r\n`) until the next chunk.
struct LineSplitter {
  /// Whether a `\r` alone ends a line, as Server-Sent Events allow; otherwise lines end at `\n`
  /// or `\r\n`, and other `\r`s are kept.
  var endsAtLoneCarriageReturn = false
  /// The longest line to hold, in bytes; a longer one throws.
  let maximumLength: Int
  /// What a line too long is reported as.
  let unit: LineTooLongError.Unit
  private var pending: [UInt8] = []
  private var afterCarriageReturn = false

  init(
    endsAtLoneCarriageReturn: Bool = false, maximumLength: Int = .max,
    unit: LineTooLongError.Unit = .line
  ) {
    self.endsAtLoneCarriageReturn = endsAtLoneCarriageReturn
    self.maximumLength = maximumLength
    self.unit = unit
  }

  /// The lines that `chunk` completes, without their line endings, as UTF-8 text (invalid bytes
  /// read as U+FFFD).
  /// - Throws: ``LineTooLongError`` as soon as an unfinished line is longer than
  ///   `maximumLength`.
  mutating func push(_ chunk: Data) throws(LineTooLongError) -> [String] {
    try pushBytes(chunk).map(Self.text)
  }

  /// The lines that `chunk` completes, without their line endings, as bytes: for parsers that
  /// split a line by byte before decoding it, as the event-stream rules do.
  /// - Throws: ``LineTooLongError`` as soon as an unfinished line is longer than
  ///   `maximumLength`.
  mutating func pushBytes(_ chunk: Data) throws(LineTooLongError) -> [[UInt8]] {
    var lines: [[UInt8]] = []
    for byte in chunk {
      if afterCarriageReturn {
        afterCarriageReturn = false
        if byte == UInt8(ascii: "\n") {
          continue  // the \n of a \r\n whose line has ended
        }
      }
      switch byte {
      case UInt8(ascii: "\n"):
        if pending.last == UInt8(ascii: "\r") {
          pending.removeLast()
        }
        endLine(into: &lines)
      case UInt8(ascii: "\r") where endsAtLoneCarriageReturn:
        endLine(into: &lines)
        afterCarriageReturn = true
      default:
        // A `\r` one past the limit may be half of the `\r\n` that ends a line of exactly the
        // limit: held, and the next byte (or the end) decides; any other byte then throws.
        guard
          pending.count < maximumLength
            || (byte == UInt8(ascii: "\r") && pending.count == maximumLength
              && !endsAtLoneCarriageReturn)
        else {
          pending = []
          throw LineTooLongError(unit: unit, limit: maximumLength)
        }
        pending.append(byte)
      }
    }
    return lines
  }

  /// Hand the pending line over and start an empty one. Not `removeAll(keepingCapacity:)`: the
  /// line handed over shares the buffer, so keeping the capacity would allocate a new buffer as
  /// large as the longest line so far for every line after it (after a 40 MB line, 256 KiB of
  /// line endings took 18 s and 1.9 GB).
  private mutating func endLine(into lines: inout [[UInt8]]) {
    lines.append(pending)
    pending = []
  }

  /// The last line, when the bytes ended without a line ending; `nil` when they ended with one.
  mutating func finish() -> String? {
    defer { pending = [] }
    guard !pending.isEmpty else { return nil }
    if !endsAtLoneCarriageReturn, pending.last == UInt8(ascii: "\r") {
      pending.removeLast()
    }
    return Self.text(pending)
  }

  private static func text(_ bytes: [UInt8]) -> String {
    String(decoding: bytes, as: UTF8.self)
  }
}
