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
    guard let host = url.host, !host.isEmpty else {
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
  private static func isHTTPScheme(_ scheme: String) -> Bool {
    let bytes = scheme.utf8
    guard bytes.count == 4 || bytes.count == 5 else { return false }
    for (byte, expected) in zip(bytes, "https".utf8) where byte | 0x20 != expected {
      return false
    }
    return true
  }

  /// Whether `name` is one of ``framingHeaderNames``, in any case. A name of another length, or
  /// not starting with one of their first letters, is ruled out before any lowercase copy is
  /// made: the usual request has a handful of headers, none of them framing.
  private static func isFramingHeaderName(_ name: String) -> Bool {
    let bytes = name.utf8
    guard let first = bytes.first, bytes.count >= 2, bytes.count <= 17,
      "cthkpuCTHKPU".utf8.contains(first)
    else { return false }
    return framingHeaderNames.contains(name.lowercased())
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
