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
    "\"" + cut(escaping(text, quotes: true), to: limit) + "\""
  }

  /// `text` on one line, for a report that shows it without quotes (a route's matcher, a value
  /// sent): every character that could disguise the report escaped as ``quoted(_:to:)`` escapes
  /// it (`\n`, `\u{202E}`), so that a line break cannot forge a line of the report nor an
  /// override reverse it. Quotes and backslashes are kept as written: with no quotes around the
  /// text they end nothing, and a JSON body keeps its own escapes readable.
  static func escaped(_ text: String) -> String {
    escaping(text, quotes: false)
  }

  private static func escaping(_ text: String, quotes: Bool) -> String {
    // Most text has nothing to escape: printable ASCII, as it is.
    if !quotes, text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) {
      return text
    }
    var escaped = ""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"" where quotes: escaped += "\\\""
      case "\\" where quotes: escaped += "\\\\"
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
    return escaped
  }

  /// The first `limit` items, then a line counting the rest.
  static func list(_ items: [String], noun: String, limit: Int = maximumItems) -> [String] {
    guard items.count > limit else { return items }
    return Array(items.prefix(limit)) + ["… and \(items.count - limit) more \(noun)"]
  }
}
