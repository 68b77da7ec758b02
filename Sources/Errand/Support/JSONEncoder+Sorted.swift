import Foundation

extension JSONEncoder {
  /// Errand's JSON encoder: sorted keys, so that the same value is the same bytes every time,
  /// and slashes left unescaped. Shared by the client's default and the test kit.
  /// - Parameter pretty: Whether to indent the output.
  /// - Returns: A new encoder.
  package static func sorted(pretty: Bool = false) -> JSONEncoder {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    if pretty {
      encoder.outputFormatting.insert(.prettyPrinted)
    }
    return encoder
  }
}
