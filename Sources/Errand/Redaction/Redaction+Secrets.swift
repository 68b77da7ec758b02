import Foundation

extension Redaction {
  /// The secret values a request carries, as they would appear if a server echoed them: the
  /// values of hidden headers (and the credential after an `Authorization` scheme such as
  /// `Bearer`, the user and password a `Basic` one encodes, and each cookie of a `Cookie`), of
  /// hidden query items (decoded and as the URL carries them) and of the fragment's hidden
  /// `name=value` pairs, the URL's user and password, and of hidden JSON or form body fields;
  /// each also as a JSON string escapes it (`\/`, `\"`) and percent-encoded, the ways a server
  /// most often quotes what it got.
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
    // Parsed only when there is something to find: every response head a listener or a log
    // line shows comes through here.
    let url = request.url.absoluteURL
    let components =
      url.query(percentEncoded: true) != nil || url.user(percentEncoded: true) != nil
        || url.password(percentEncoded: true) != nil
      ? URLComponents(url: url, resolvingAgainstBaseURL: true) : nil
    for item in components?.queryItems ?? [] where queryParameters.contains(item.name.lowercased())
    {
      if let value = item.value { values.insert(value) }
    }
    // As the URL carries them, percent-encoded: a server that quotes the URL it got.
    for item in components?.percentEncodedQueryItems ?? []
    where queryParameters.contains((item.name.removingPercentEncoding ?? item.name).lowercased()) {
      if let value = item.value { values.insert(value) }
    }
    // `name=value` pairs in the fragment, which the URL's redaction hides as in the query
    // (an OAuth implicit grant's `#access_token=`): a server or a stub that quotes the URL it
    // got may echo them too.
    if let fragment = url.fragment(percentEncoded: true), fragment.contains("=") {
      for pair in Self.fragmentPairs(Substring(fragment)).pairs.split(separator: "&") {
        let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
        if parts.count == 2,
          queryParameters.contains((parts[0].removingPercentEncoding ?? parts[0]).lowercased())
        {
          values.insert(parts[1])
          if let decoded = parts[1].removingPercentEncoding { values.insert(decoded) }
        }
      }
    }
    // Decoded, and as the URL carries them: one that does not decode (`%FF`) has no decoded form.
    for part in [
      components?.password, components?.user, components?.percentEncodedPassword,
      components?.percentEncodedUser,
    ] {
      if let part { values.insert(part) }
    }
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
    return [
      json, json.replacingOccurrences(of: "/", with: "\\/"), encoded,
      encoded?.replacingOccurrences(of: "%20", with: "+"),
    ].compactMap { $0 }.filter { $0 != value }
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
  /// (replacing in place would shift the rest at every match), or `nil` when it holds none. A
  /// byte of `needle` also matches its percent-encoding, in either case (`%2F`, `%2f`), and a
  /// space a `+`: servers quote what they got encoded by libraries that each leave a different
  /// set of characters as they are (Python's `quote` keeps `/`, JavaScript's `escape` keeps `+`).
  private static func replacing(_ needle: [UInt8], in data: Data) -> Data? {
    let marker = Array(HTTPHeaders.redactedValue.utf8)
    return data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Data? in
      let count = bytes.count
      guard count >= needle.count else { return nil }
      var output: [UInt8] = []
      var copied = 0
      var index = 0
      let first = needle[0]
      let (percent, plus, space) = (UInt8(ascii: "%"), UInt8(ascii: "+"), UInt8(ascii: " "))
      while index < count {
        let byte = bytes[index]
        guard byte == first || byte == percent || (byte == plus && first == space),
          let end = matchEnd(of: needle, in: bytes, from: index)
        else {
          index += 1
          continue
        }
        if output.isEmpty {
          output.reserveCapacity(count)
        }
        output.append(contentsOf: bytes[copied..<index])
        output.append(contentsOf: marker)
        index = end
        copied = end
      }
      guard copied > 0 else { return nil }
      output.append(contentsOf: bytes[copied..<count])
      return Data(output)
    }
  }

  /// Where a match of `needle` that starts at `start` ends, each of its bytes as written or
  /// percent-encoded (a space also as `+`); `nil` when there is none.
  private static func matchEnd(
    of needle: [UInt8], in bytes: UnsafeRawBufferPointer, from start: Int
  ) -> Int? {
    var position = start
    for expected in needle {
      guard position < bytes.count else { return nil }
      let byte = bytes[position]
      if byte == expected {
        position += 1
      } else if byte == UInt8(ascii: "+") && expected == UInt8(ascii: " ") {
        position += 1
      } else if byte == UInt8(ascii: "%"), position + 2 < bytes.count,
        let high = hexValue(bytes[position + 1]), let low = hexValue(bytes[position + 2]),
        high << 4 | low == expected
      {
        position += 3
      } else {
        return nil
      }
    }
    return position
  }

  /// The value of a hex digit, in either case.
  private static func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
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
