/// Percent-encoding for the parts of a URL that Errand builds from plain text.
enum PercentEncoding {
  /// Bytes a path segment keeps as is: RFC 3986's unreserved characters and the sub-delimiters,
  /// `:` and `@`, except `+` (which many servers read as a space).
  static let pathSegment = allowedBytes("!$&'()*,;=:@")

  /// Bytes a query name or value keeps as is: the unreserved characters and the sub-delimiters
  /// that do not separate query items, plus `:`, `@`, `/` and `?`. `&`, `=`, `+`, `#` and `%`
  /// are always encoded.
  static let queryComponent = allowedBytes("!$'()*,;:@/?")

  /// Bytes a form name or value keeps before spaces become `+`: letters, digits, `*-._` and space.
  static let formComponent = Set(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789*-._ ".utf8)

  private static let hexDigits = Array("0123456789ABCDEF".utf8)

  /// Encode `text` as UTF-8, percent-encoding every byte outside `allowed`.
  static func encode(_ text: String, allowing allowed: Set<UInt8>) -> String {
    if text.utf8.allSatisfy(allowed.contains) {
      return text
    }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(text.utf8.count * 3)
    for byte in text.utf8 {
      if allowed.contains(byte) {
        bytes.append(byte)
      } else {
        bytes += [UInt8(ascii: "%"), hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0x0F)]]
      }
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  /// The unreserved characters (letters, digits, `-._~`) and `extra`.
  private static func allowedBytes(_ extra: String) -> Set<UInt8> {
    let unreserved = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~"
    return Set((unreserved + extra).utf8)
  }
}
