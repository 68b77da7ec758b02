import Foundation

/// Limits for the text the test kit prints when a request matches nothing: however large the
/// request or the route, a report stays a few kilobytes.
enum DiagnosticText {
  /// The longest single value quoted in a report, in characters.
  static let maximumValue = 200
  /// The most items (headers, difference lines) listed; the rest are counted.
  static let maximumItems = 50

  /// `text`, cut to `limit` characters with `…` when it is longer.
  static func cut(_ text: String, to limit: Int = maximumValue) -> String {
    guard text.count > limit else { return text }
    return text.prefix(limit) + "… (\(text.utf8.count) bytes)"
  }

  /// The first `limit` items, then a line counting the rest.
  static func list(_ items: [String], noun: String, limit: Int = maximumItems) -> [String] {
    guard items.count > limit else { return items }
    return Array(items.prefix(limit)) + ["… and \(items.count - limit) more \(noun)"]
  }
}
