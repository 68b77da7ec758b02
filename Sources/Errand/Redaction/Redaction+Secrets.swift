import Foundation

extension Redaction {
  /// The secret values a request carries, as they would appear if a server echoed them: the
  /// values of hidden headers (and the credential after an `Authorization` scheme such as
  /// `Bearer`, the user and password a `Basic` one encodes, and each cookie of a `Cookie`), of
  /// hidden query items (decoded and as the URL carries them), the URL's user and password, and
  /// of hidden JSON or form body fields; each also as a JSON string escapes it (`\/`, `\"`)
  /// and percent-encoded, the ways a server most often quotes what it got.
  /// Values shorter than four characters are left out: hiding every `1` would hide too much.
  /// - Parameter request: The request.
  /// - Returns: The values, longest first.
  package func secretValues(in request: HTTPRequest) -> [String] {
    var values: Set<String> = []
    for field in request.headers where hidesHeader(field.name) {
      values.insert(field.value)
      if let space = field.value.firstIndex(of: " ") {
        let credential = String(field.value[field.value.index(after: space)...])
        values.insert(credential)
        if field.value[..<space].lowercased() == "basic",
          let decoded = Data(
            base64Encoded: credential.trimmingCharacters(in: .whitespaces)),
          let pair = String(data: decoded, encoding: .utf8)
        {
          // A server may quote the user or the password it decoded ("wrong password for …").
          values.insert(pair)
          if let colon = pair.firstIndex(of: ":") {
            values.insert(String(pair[..<colon]))
            values.insert(String(pair[pair.index(after: colon)...]))
          }
        }
      }
      if field.name.lowercased() == "cookie" {
        // Each cookie's value on its own, as a server would quote it.
        for pair in field.value.split(separator: ";") {
          if let equals = pair.firstIndex(of: "=") {
            values.insert(
              String(pair[pair.index(after: equals)...]).trimmingCharacters(in: .whitespaces))
          }
        }
      }
    }
    let components = URLComponents(url: request.url, resolvingAgainstBaseURL: true)
    for item in components?.queryItems ?? [] where queryParameters.contains(item.name.lowercased())
    {
      if let value = item.value { values.insert(value) }
    }
    // As the URL carries them, percent-encoded: a server that quotes the URL it got.
    for item in components?.percentEncodedQueryItems ?? []
    where queryParameters.contains((item.name.removingPercentEncoding ?? item.name).lowercased()) {
      if let value = item.value { values.insert(value) }
    }
    if let password = components?.password { values.insert(password) }
    if let user = components?.user { values.insert(user) }
    if let body = request.body {
      if let ranges = hiddenMultipartRanges(in: body, contentType: request.headers["Content-Type"])
      {
        for range in ranges {
          values.insert(String(decoding: body[range], as: UTF8.self))
        }
      } else if let json = try? JSONValue.parse(body) {
        collect(from: json, into: &values)
      } else if let text = String(data: body, encoding: .utf8) {
        for pair in text.split(separator: "&") {
          let parts = pair.split(separator: "=", maxSplits: 1).map {
            String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding
              ?? String($0)
          }
          if parts.count == 2, bodyFields.contains(parts[0].lowercased()) {
            values.insert(parts[1])
          }
        }
      }
    }
    for value in values {
      values.formUnion(Self.echoedForms(of: value))
    }
    return values.filter { $0.count >= 4 && $0 != HTTPHeaders.redactedValue }
      .sorted { $0.count > $1.count }
  }

  /// `value` as a server that quotes it may write it: in a JSON string (with and without `/`
  /// escaped) and percent-encoded (all but the unreserved characters, and with `+` for a space).
  private static func echoedForms(of value: String) -> [String] {
    let json = value.replacingOccurrences(of: "\\", with: "\\\\")
      .replacingOccurrences(of: "\"", with: "\\\"")
    let unreserved = CharacterSet(
      charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
    let encoded = value.addingPercentEncoding(withAllowedCharacters: unreserved)
    // Percent-encoded with lowercase hex digits too (`%2f`): RFC 3986 says it is the same.
    let lowercased = encoded.map(lowercasingPercentEscapes)
    return [
      json, json.replacingOccurrences(of: "/", with: "\\/"), encoded,
      encoded?.replacingOccurrences(of: "%20", with: "+"), lowercased,
      lowercased?.replacingOccurrences(of: "%20", with: "+"),
    ].compactMap { $0 }.filter { $0 != value }
  }

  /// `text` with the two hex digits after each `%` lowercased.
  private static func lowercasingPercentEscapes(_ text: String) -> String {
    var result = ""
    var pending = 0
    for character in text {
      if character == "%" {
        pending = 2
        result.append(character)
      } else if pending > 0 {
        pending -= 1
        result += character.lowercased()
      } else {
        result.append(character)
      }
    }
    return result
  }

  /// `data` with every occurrence of each value replaced by `<redacted>`.
  /// - Parameters:
  ///   - values: The secret values, longest first.
  ///   - data: The bytes to scrub.
  /// - Returns: The scrubbed bytes.
  package static func scrub(_ values: [String], from data: Data) -> Data {
    var scrubbed = data
    for value in values where !value.isEmpty {
      if let replaced = replacing(Array(value.utf8), in: scrubbed) {
        scrubbed = replaced
      }
    }
    return scrubbed
  }

  /// `data` with every occurrence of `needle` replaced by `<redacted>`, built in one pass
  /// (replacing in place would shift the rest at every match), or `nil` when it holds none.
  private static func replacing(_ needle: [UInt8], in data: Data) -> Data? {
    let marker = Array(HTTPHeaders.redactedValue.utf8)
    return data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Data? in
      let count = bytes.count
      let length = needle.count
      guard count >= length else { return nil }
      var output: [UInt8] = []
      var copied = 0
      var index = 0
      let first = needle[0]
      while index <= count - length {
        guard bytes[index] == first else {
          index += 1
          continue
        }
        var same = true
        for offset in 1..<length where bytes[index + offset] != needle[offset] {
          same = false
          break
        }
        guard same else {
          index += 1
          continue
        }
        if output.isEmpty {
          output.reserveCapacity(count)
        }
        output.append(contentsOf: bytes[copied..<index])
        output.append(contentsOf: marker)
        index += length
        copied = index
      }
      guard copied > 0 else { return nil }
      output.append(contentsOf: bytes[copied..<count])
      return Data(output)
    }
  }

  private func collect(from json: JSONValue, into values: inout Set<String>) {
    var pending = [json]
    while let value = pending.popLast() {
      switch value {
      case .array(let items):
        pending += items
      case .object(let members):
        for member in members {
          if bodyFields.contains(member.key.lowercased()), case .string(let secret) = member.value {
            values.insert(secret)
          } else if bodyFields.contains(member.key.lowercased()),
            case .number(let secret) = member.value
          {
            // A PIN or a numeric code is as secret as a string one, and quoted as written.
            values.insert(secret)
          } else {
            pending.append(member.value)
          }
        }
      default:
        break
      }
    }
  }
}
