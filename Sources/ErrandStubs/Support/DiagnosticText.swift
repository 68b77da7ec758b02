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

  /// `text` in quotes, as Swift writes a string literal, cut to `limit` characters: quotes,
  /// backslashes and every character that could disguise the report (controls, bidirectional
  /// overrides, invisible format characters, line and paragraph separators) escaped as
  /// `\n` or `\u{202E}`, so that an empty, odd or hostile name reads as what it is, on one line.
  /// An emoji's joiner and tags are left as they are.
  static func quoted(_ text: String, to limit: Int = maximumValue) -> String {
    var escaped = ""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": escaped += "\\\""
      case "\\": escaped += "\\\\"
      case "\n": escaped += "\\n"
      case "\r": escaped += "\\r"
      case "\t": escaped += "\\t"
      case "\u{200D}", "\u{E0020}"..."\u{E007F}": escaped.unicodeScalars.append(scalar)
      default:
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator:
          escaped += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
        default:
          escaped.unicodeScalars.append(scalar)
        }
      }
    }
    return "\"" + cut(escaped, to: limit) + "\""
  }

  /// The first `limit` items, then a line counting the rest.
  static func list(_ items: [String], noun: String, limit: Int = maximumItems) -> [String] {
    guard items.count > limit else { return items }
    return Array(items.prefix(limit)) + ["… and \(items.count - limit) more \(noun)"]
  }
}
