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

extension Data {
  /// The bytes as JSON re-serialized with sorted keys, so that documents equal in content compare
  /// equal as bytes; `nil` when they are not JSON.
  package var canonicalJSON: Data? {
    guard let object = try? JSONSerialization.jsonObject(with: self, options: [.fragmentsAllowed])
    else {
      return nil
    }
    return try? JSONSerialization.data(
      withJSONObject: object, options: [.sortedKeys, .fragmentsAllowed])
  }
}
