import Foundation

extension HTTPRequest {
  /// The header fields that frame a message on the wire. Errand's transports write them from the
  /// URL and the body; a request that sets one itself could make the server read the rest of its
  /// body as a second request, so it is refused.
  public static let framingHeaderNames: Set<String> = [
    "content-length", "transfer-encoding", "host", "connection", "keep-alive",
    "proxy-connection", "te", "trailer", "upgrade",
  ]

  /// Why this request cannot go on the wire, or `nil` when it can: the method must be an RFC 9110
  /// token, the URL `http` or `https` with a host, header names tokens, header values free of
  /// control characters other than tab, a ``bodyFile`` a regular file (not a named pipe, a device
  /// or a folder), and framing headers (``framingHeaderNames``) are left to the transport.
  public var validationProblem: String? {
    if let problem = method.validationProblem {
      return problem
    }
    guard let scheme = url.scheme, Self.isHTTPScheme(scheme) else {
      return
        "the URL's scheme must be http or https, not \(url.scheme.map { "\"\($0)\"" } ?? "none")."
    }
    // The host as written is empty exactly when it is decoded; decoding (a few times slower)
    // is left for a host with a percent sign, which may not decode at all.
    guard let host = url.host(percentEncoded: true), !host.isEmpty,
      !host.anyByte({ $0 == UInt8(ascii: "%") }) || url.host(percentEncoded: false) != nil
    else {
      return "the URL has no host."
    }
    if let problem = headers.validationProblem {
      return problem
    }
    if let bodyFile, let problem = Self.bodyFileProblem(bodyFile) {
      return problem
    }
    if let framing = headers.fields.first(where: { Self.isFramingHeaderName($0.name) }) {
      return "the header \"\(framing.name)\" frames the message and is written by the transport "
        + "from the URL and the body; remove it."
    }
    return nil
  }

  /// Whether `scheme` is `http` or `https`, in any case, read without making a lowercase copy.
  static func isHTTPScheme(_ scheme: String) -> Bool {
    var count = 0
    for byte in scheme.utf8 {
      let expected: UInt8
      switch count {
      case 0: expected = UInt8(ascii: "h")
      case 1, 2: expected = UInt8(ascii: "t")
      case 3: expected = UInt8(ascii: "p")
      case 4: expected = UInt8(ascii: "s")
      default: return false
      }
      // Exact for these letters: only "H" and "h" give "h" with the bit 0x20 set, and so on.
      guard byte | 0x20 == expected else { return false }
      count += 1
    }
    return count == 4 || count == 5
  }

  /// Whether `name` is one of ``framingHeaderNames``, in any ASCII case, compared without a
  /// lowercase copy: every header of every request is checked, and the usual request has a
  /// handful of headers, none of them framing. Names of another length are ruled out at once.
  static func isFramingHeaderName(_ name: String) -> Bool {
    let bytes = name.utf8
    switch bytes.count {
    case 2: return bytes.equalsIgnoringASCIICase("te")
    case 4: return bytes.equalsIgnoringASCIICase("host")
    case 7:
      return bytes.equalsIgnoringASCIICase("trailer") || bytes.equalsIgnoringASCIICase("upgrade")
    case 10:
      return bytes.equalsIgnoringASCIICase("connection")
        || bytes.equalsIgnoringASCIICase("keep-alive")
    case 14: return bytes.equalsIgnoringASCIICase("content-length")
    case 16: return bytes.equalsIgnoringASCIICase("proxy-connection")
    case 17: return bytes.equalsIgnoringASCIICase("transfer-encoding")
    default: return false
    }
  }

  /// Why `url` cannot be a body file, or `nil` when it is a regular file (or a link to one),
  /// found without opening it.
  static func bodyFileProblem(_ url: URL) -> String? {
    guard url.isFileURL else {
      return "the body file \(url.absoluteString) is not a file URL."
    }
    switch FileKind(atPath: url.path, following: true) {
    case .regular: return nil
    case .missing: return "the body file \(url.path) does not exist or is not a file."
    case let kind:
      return "the body file \(url.path) is \(kind.description), not a regular file; Errand uploads "
        + "regular files only."
    }
  }

  /// Throw unless the request can go on the wire (see ``validationProblem``).
  ///
  /// Errand's transports call this for every request they send, including each redirect they
  /// follow, so a middleware or a direct `transport.send` cannot inject a header or smuggle a
  /// second request. A transport of your own should call it too.
  /// - Throws: ``APIError/invalidRequest(_:)`` naming the request and the problem.
  public func validate() throws(APIError) {
    if let problem = validationProblem {
      throw APIError.invalidRequest(
        "\(Self.describe(method)) \(Redaction.default.merging(redaction).redact(url)): \(problem)")
    }
  }

  /// The method as text, quoted with its control characters escaped when it is not a token.
  private static func describe(_ method: HTTPMethod) -> String {
    method.isValidToken ? method.rawValue : String(reflecting: method.rawValue)
  }
}

extension HTTPMethod {
  /// Why the method cannot go on the wire, or `nil` when it is an RFC 9110 token.
  var validationProblem: String? {
    isValidToken
      ? nil : "the method is not a valid token (a space, CR or LF could smuggle a second request)."
  }
}

extension String.UTF8View {
  /// Whether these bytes spell `lowercase` (lowercase ASCII) with any of its letters in upper
  /// case; no other byte is folded.
  fileprivate func equalsIgnoringASCIICase(_ lowercase: StaticString) -> Bool {
    guard count == lowercase.utf8CodeUnitCount else { return false }
    return lowercase.withUTF8Buffer { expected in
      var index = 0
      for byte in self {
        let folded = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
        guard folded == expected[index] else { return false }
        index += 1
      }
      return true
    }
  }
}
