import Foundation

/// A W3C Trace Context (`traceparent` and `tracestate`, https://www.w3.org/TR/trace-context/):
/// which trace a request belongs to and which span sent it.
///
/// ```swift
/// let incoming = TraceContext(traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
/// try await TraceContext.$current.withValue(incoming) {
///   try await client.send(endpoint)   // TraceContextMiddleware propagates it
/// }
/// ```
public struct TraceContext: Sendable, Hashable {
  /// The trace, 32 lowercase hexadecimal digits, not all zero.
  public let traceID: String
  /// The span the request is sent from, 16 lowercase hexadecimal digits, not all zero.
  public let parentID: String
  /// Whether the caller records the trace (the `sampled` flag).
  public let isSampled: Bool
  /// Vendor data (`tracestate`), passed on as received, except that list members that do not
  /// follow the specification's grammar are dropped (a key that is not lower-case letters,
  /// digits and `_-*/`, with at most one `@`; a value that is not printable ASCII without `,` and
  /// `=`; either longer than 256 characters; a control character anywhere), and only the first
  /// ``maximumStateMembers`` are kept; `nil` for none.
  public let state: String?

  /// The context of the task that runs now, for ``TraceContextMiddleware`` to propagate; set it
  /// with `TraceContext.$current.withValue(_:operation:)`. Deliberately a task-local: the trace a
  /// piece of work belongs to is meant to reach every task it starts.
  @TaskLocal public static var current: TraceContext?

  /// A context read from the headers of an incoming request, or `nil` when `traceparent` is not
  /// valid (as the specification says to ignore it then). Version `00` has exactly four fields;
  /// a later version (not `ff`) is read for its first four, as the specification asks, and is
  /// passed on as version `00`.
  /// - Parameters:
  ///   - traceparent: The `traceparent` value.
  ///   - tracestate: The `tracestate` value, if any.
  public init?(traceparent: String, tracestate: String? = nil) {
    let parts = Self.trimmed(traceparent).split(separator: "-", omittingEmptySubsequences: false)
    guard parts.count >= 4, parts[0].utf8.count == 2, Self.isHex(parts[0]), parts[0] != "ff",
      parts[0] != "00" || parts.count == 4, Self.isID(parts[1], length: 32),
      Self.isID(parts[2], length: 16), parts[3].count == 2, Self.isHex(parts[3]),
      let flags = UInt8(parts[3], radix: 16)
    else { return nil }
    traceID = String(parts[1])
    parentID = String(parts[2])
    isSampled = flags & 1 == 1
    state = tracestate.flatMap(Self.sanitizedState)
  }

  /// The most `tracestate` list members passed on: 32, as the W3C specification allows.
  public static let maximumStateMembers = 32

  /// `text` without the optional white space of HTTP (spaces and tabs) around it; a no-break
  /// space or another Unicode space is not white space there.
  private static func trimmed<Text: StringProtocol>(_ text: Text) -> Substring {
    let isOWS: (Character) -> Bool = { $0 == " " || $0 == "\t" }
    let start = text.firstIndex { !isOWS($0) } ?? text.endIndex
    let end = text.lastIndex { !isOWS($0) }.map { text.index(after: $0) } ?? start
    return Substring(text[start..<max(start, end)])
  }

  /// The `tracestate` members that follow the grammar, at most ``maximumStateMembers`` of
  /// them; `nil` when none is left.
  private static func sanitizedState(_ value: String) -> String? {
    let members = value.split(separator: ",").lazy.map { trimmed($0) }
      .filter(isStateMember)
      .prefix(maximumStateMembers)
    let kept = members.joined(separator: ",")
    return kept.isEmpty ? nil : kept
  }

  /// A context with the given parts, or `nil` when an identifier is not valid.
  /// - Parameters:
  ///   - traceID: 32 lowercase hexadecimal digits, not all zero.
  ///   - parentID: 16 lowercase hexadecimal digits, not all zero.
  ///   - isSampled: Whether the trace is recorded.
  ///   - state: Vendor data (`tracestate`), if any.
  public init?(traceID: String, parentID: String, isSampled: Bool = true, state: String? = nil) {
    let flags = isSampled ? "01" : "00"
    self.init(traceparent: "00-\(traceID)-\(parentID)-\(flags)", tracestate: state)
  }

  /// A new trace, with random identifiers.
  /// - Parameter isSampled: Whether the trace is recorded.
  /// - Returns: The context.
  public static func newTrace(isSampled: Bool = true) -> TraceContext {
    TraceContext(
      uncheckedTraceID: randomID(bytes: 16), parentID: randomID(bytes: 8), isSampled: isSampled,
      state: nil)
  }

  /// The same trace sent from a new span (a new random parent identifier).
  /// - Returns: The context for one outgoing request.
  public func childSpan() -> TraceContext {
    TraceContext(
      uncheckedTraceID: traceID, parentID: Self.randomID(bytes: 8), isSampled: isSampled,
      state: state)
  }

  /// The `traceparent` value: `00-<trace>-<parent>-<flags>`.
  public var traceparent: String {
    "00-\(traceID)-\(parentID)-\(isSampled ? "01" : "00")"
  }

  private init(uncheckedTraceID: String, parentID: String, isSampled: Bool, state: String?) {
    self.traceID = uncheckedTraceID
    self.parentID = parentID
    self.isSampled = isSampled
    self.state = state
  }

  /// W3C Trace Context §3.3.1.3: `key=value`, where the key is `lcalpha 0*255(keychar)` or
  /// `(lcalpha / DIGIT) 0*240(keychar) "@" lcalpha 0*13(keychar)`, a keychar being a lower-case
  /// letter, a digit or one of `_-*/`, and the value is 1 to 256 printable ASCII characters
  /// other than `,` and `=`, the last not a space.
  private static func isStateMember(_ member: Substring) -> Bool {
    guard let equals = member.firstIndex(of: "=") else { return false }
    let key = member[..<equals].utf8
    let value = member[member.index(after: equals)...].utf8
    func isLower(_ byte: UInt8) -> Bool { (97...122).contains(byte) }
    func isDigit(_ byte: UInt8) -> Bool { (48...57).contains(byte) }
    func isKeyChar(_ byte: UInt8) -> Bool {
      isLower(byte) || isDigit(byte) || "_-*/".utf8.contains(byte)
    }
    func isPart(_ part: Substring.UTF8View.SubSequence, first: (UInt8) -> Bool, most: Int) -> Bool {
      guard let head = part.first, first(head), part.count <= most else { return false }
      return part.dropFirst().allSatisfy(isKeyChar)
    }
    let parts = key.split(separator: UInt8(ascii: "@"), omittingEmptySubsequences: false)
    let keyIsValid: Bool
    switch parts.count {
    case 1: keyIsValid = isPart(parts[0], first: isLower, most: 256)
    case 2:
      keyIsValid =
        isPart(parts[0], first: { isLower($0) || isDigit($0) }, most: 241)
        && isPart(parts[1], first: isLower, most: 14)
    default: keyIsValid = false
    }
    return keyIsValid && (1...256).contains(value.count) && value.last != UInt8(ascii: " ")
      && value.allSatisfy {
        (0x20...0x7E).contains($0) && $0 != UInt8(ascii: ",") && $0 != UInt8(ascii: "=")
      }
  }

  private static func isHex(_ text: Substring) -> Bool {
    text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
  }

  private static func isID(_ text: Substring, length: Int) -> Bool {
    text.utf8.count == length && isHex(text) && text.contains { $0 != "0" }
  }

  /// `bytes` random bytes as lowercase hex, never all zero.
  private static func randomID(bytes: Int) -> String {
    var generator = SystemRandomNumberGenerator()
    while true {
      let values = (0..<bytes).map { _ in UInt8.random(in: 0...255, using: &generator) }
      guard values.contains(where: { $0 != 0 }) else { continue }
      return values.map { byte in
        let hex = String(byte, radix: 16)
        return hex.count == 1 ? "0" + hex : hex
      }.joined()
    }
  }
}
