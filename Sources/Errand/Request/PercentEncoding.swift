/// Percent-encoding for the parts of a URL that Errand builds from plain text.
enum PercentEncoding {
  /// Bytes a path segment keeps as is: RFC 3986's unreserved characters and the sub-delimiters,
  /// `:` and `@`, except `+` (which many servers read as a space).
  static let pathSegment = allowedBytes("!$&'()*,;=:@")

  /// Bytes a query name or value keeps as is: the unreserved characters and the sub-delimiters
  /// that do not separate query items, plus `:`, `@`, `/` and `?`. `&`, `=`, `+`, `#` and `%`
  /// are always encoded.
  static let queryComponent = allowedBytes("!$'()*,;:@/?")

  /// Encode `text` as UTF-8, percent-encoding every byte outside `allowed`.
  static func encode(_ text: String, allowing allowed: Set<UInt8>) -> String {
    var result = ""
    for byte in text.utf8 {
      if allowed.contains(byte) {
        result.append(Character(Unicode.Scalar(byte)))
      } else {
        result.append(percentEncoded(byte))
      }
    }
    return result
  }

  /// The unreserved characters (letters, digits, `-._~`) and `extra`.
  private static func allowedBytes(_ extra: String) -> Set<UInt8> {
    let unreserved = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~"
    return Set((unreserved + extra).utf8)
  }
}
