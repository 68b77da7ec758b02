import Foundation

extension Redaction {
  /// A body with sensitive JSON or form fields (URL-encoded or `multipart/form-data`) hidden;
  /// other bodies are returned unchanged.
  ///
  /// A JSON body keeps its key order and formatting when nothing in it is secret, and is written
  /// compactly, in its own order, when something is; URLs inside its strings lose their secret
  /// query values too. A JSON body nested deeper than 512 levels cannot be
  /// inspected safely and is replaced by a note of its size.
  /// - Parameters:
  ///   - body: The body.
  ///   - contentType: The `Content-Type` header value, which tells a form from JSON.
  /// - Returns: The redacted body.
  public func redact(body: Data, contentType: String?) -> Data {
    if let ranges = hiddenMultipartRanges(in: body, contentType: contentType) {
      return ranges.isEmpty ? body : redact(multipart: body, ranges: ranges)
    }
    if contentType?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true {
      guard let text = String(data: body, encoding: .utf8) else { return body }
      return Data(Self.redactPairs(text, hiding: bodyFields, plusIsSpace: true).utf8)
    }
    guard let first = body.first(where: { !Self.isJSONWhitespace($0) }),
      first == UInt8(ascii: "{") || first == UInt8(ascii: "[")
    else {
      return body
    }
    let value: JSONValue
    do {
      value = try JSONValue.parse(body)
    } catch let error where error.isNestedTooDeeply {
      return Data("<\(body.count) bytes of JSON nested too deeply to redact>".utf8)
    } catch {
      return body
    }
    let redacted = redactJSON(value)
    return redacted == value ? body : Data(redacted.compact.utf8)
  }

  private func redactJSON(_ value: JSONValue) -> JSONValue {
    switch value {
    case .object(let members):
      return .object(
        members.map { member in
          bodyFields.contains(member.key.lowercased())
            ? JSONValue.Member(key: member.key, value: .string(HTTPHeaders.redactedValue))
            : JSONValue.Member(key: member.key, value: redactJSON(member.value))
        })
    case .array(let items):
      return .array(items.map(redactJSON))
    case .string(let text) where text.contains("://") && (text.contains("?") || text.contains("@")):
      // URLs inside bodies (an API echoing a link, say) lose their secret query values too.
      return .string(redact(urlText: text))
    default:
      return value
    }
  }

  private static func isJSONWhitespace(_ byte: UInt8) -> Bool {
    byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
  }
}
