import Foundation

/// HTTP dates as RFC 9110 §5.6.7 writes them (IMF-fixdate, and the two obsolete forms): in
/// `Retry-After`, `Date`, `Expires` and `Last-Modified`.
enum HTTPDate {
  private static let formats = [
    "EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy",
  ]

  /// The date a field holds, or `nil` when it is not an HTTP date.
  static func parse(_ text: String?) -> Date? {
    guard let text else { return nil }
    for format in formats {
      let formatter = DateFormatter()
      formatter.locale = Locale(identifier: "en_US_POSIX")
      formatter.timeZone = TimeZone(identifier: "GMT")
      formatter.dateFormat = format
      if let date = formatter.date(from: text) {
        return date
      }
    }
    return nil
  }
}
