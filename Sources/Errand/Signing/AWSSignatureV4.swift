import Foundation

/// AWS Signature Version 4: signs requests to AWS services (and S3-compatible stores) in the
/// `Authorization` header, as AWS documents it.
///
/// ```swift
/// let signer = AWSSignatureV4(
///   credentials: .init(accessKeyID: keyID, secretAccessKey: secret),
///   region: "eu-west-1", service: "execute-api")
/// let signed = try await signer.sign(request, at: Date())   // in your last middleware
/// ```
///
/// The canonical request holds the method, the path (normalized and encoded twice, as every
/// service but S3 wants; see ``s3(credentials:region:payload:)``), the query sorted, every header
/// but those transports and proxies change (`User-Agent`, `Expect`, `Connection`,
/// `Transfer-Encoding`, `Authorization` and a few more), `host` from the URL, `x-amz-date` and the
/// session token, and the body's SHA-256 (a body file is hashed a piece at a time), or
/// `UNSIGNED-PAYLOAD`. Checked against the signature test suite AWS publishes with its C SDK
/// (`aws-c-auth`).
///
/// Neither the secret key nor the session token appears in a printed form of the signer.
public struct AWSSignatureV4: RequestSigner, CustomStringConvertible {
  /// The keys requests are signed with.
  public struct Credentials: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
    /// The access key ID, which goes in every `Authorization` header.
    public var accessKeyID: String
    /// The secret access key: never sent, never printed.
    public var secretAccessKey: String
    /// The session token of temporary credentials, sent as `x-amz-security-token`: never
    /// printed.
    public var sessionToken: String?

    /// Credentials.
    /// - Parameters:
    ///   - accessKeyID: The access key ID.
    ///   - secretAccessKey: The secret access key.
    ///   - sessionToken: The session token of temporary credentials, if any.
    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
      self.accessKeyID = accessKeyID
      self.secretAccessKey = secretAccessKey
      self.sessionToken = sessionToken
    }

    /// The access key ID alone: `AKIDEXAMPLE (secret hidden)`.
    public var description: String {
      "\(accessKeyID) (secret hidden\(sessionToken == nil ? "" : ", session token hidden"))"
    }

    /// The credentials for `dump` and debuggers, without the secret or the token.
    public var customMirror: Mirror {
      Mirror(
        self,
        children: [
          "accessKeyID": accessKeyID, "secretAccessKey": "***",
          "sessionToken": sessionToken.map { _ in "***" } as Any,
        ], displayStyle: .struct)
    }
  }

  /// What the signature says of the body.
  public struct Payload: Sendable, Hashable, CustomStringConvertible {
    let name: String

    /// The body's SHA-256 is signed.
    public static let hashed = Payload(name: "hashed")
    /// The body's SHA-256 is signed and sent as `x-amz-content-sha256` (S3 requires the header).
    public static let hashedWithHeader = Payload(name: "hashed, with x-amz-content-sha256")
    /// `UNSIGNED-PAYLOAD` is signed in place of the body's hash, and sent as
    /// `x-amz-content-sha256`: for large uploads to S3 over HTTPS, which then needs no pass over
    /// the body before sending it.
    public static let unsigned = Payload(name: "unsigned")

    /// What is signed, in words.
    public var description: String { name }
  }

  /// The keys.
  public var credentials: Credentials
  /// The region, such as `us-east-1`.
  public var region: String
  /// The service's signing name, such as `execute-api`, `s3` or `sts`.
  public var service: String
  /// What the signature says of the body.
  public var payload: Payload
  /// Whether the path's `.` and `..` segments and repeated slashes are resolved before signing
  /// (every service but S3).
  public var normalizesPath: Bool
  /// Whether the path, as sent, is percent-encoded once more for the signature (every service
  /// but S3, which signs it encoded once).
  public var encodesPathTwice: Bool
  /// Whether the session token is signed (`x-amz-security-token` added before signing, as almost
  /// every service wants), or added after the signature.
  public var signsSessionToken: Bool

  /// A signer for a service other than S3.
  /// - Parameters:
  ///   - credentials: The keys.
  ///   - region: The region.
  ///   - service: The service's signing name.
  ///   - payload: What the signature says of the body; its hash by default.
  ///   - normalizesPath: Whether `.`, `..` and repeated slashes are resolved; `true` by default.
  ///   - encodesPathTwice: Whether the path is encoded once more; `true` by default.
  ///   - signsSessionToken: Whether the session token is signed; `true` by default.
  public init(
    credentials: Credentials, region: String, service: String, payload: Payload = .hashed,
    normalizesPath: Bool = true, encodesPathTwice: Bool = true, signsSessionToken: Bool = true
  ) {
    self.credentials = credentials
    self.region = region
    self.service = service
    self.payload = payload
    self.normalizesPath = normalizesPath
    self.encodesPathTwice = encodesPathTwice
    self.signsSessionToken = signsSessionToken
  }

  /// A signer for S3: paths signed as they are, encoded once, and `x-amz-content-sha256` sent.
  /// - Parameters:
  ///   - credentials: The keys.
  ///   - region: The bucket's region.
  ///   - payload: `.hashedWithHeader` (the default) or `.unsigned`.
  /// - Returns: The signer.
  public static func s3(
    credentials: Credentials, region: String, payload: Payload = .hashedWithHeader
  ) -> AWSSignatureV4 {
    AWSSignatureV4(
      credentials: credentials, region: region, service: "s3",
      payload: payload == .hashed ? .hashedWithHeader : payload, normalizesPath: false,
      encodesPathTwice: false)
  }

  /// The signer, without its secrets: `AWS SigV4 for execute-api in eu-west-1 as AKID… (secret
  /// hidden)`.
  public var description: String {
    "AWS SigV4 for \(service) in \(region) as \(credentials)"
  }

  /// `request` with `x-amz-date`, the session token and `x-amz-content-sha256` as configured,
  /// and `Authorization`.
  public func sign(_ request: HTTPRequest, at date: Date) async throws -> HTTPRequest {
    try signed(request, at: date).request
  }

  /// The signed request, and the texts the signature was computed from (for tests and for
  /// telling why a service refused a signature).
  func signed(_ request: HTTPRequest, at date: Date) throws -> (
    request: HTTPRequest, canonicalRequest: String, stringToSign: String, signature: String
  ) {
    var request = request
    let (amzDate, day) = Self.timestamps(date)
    for name in ["Authorization", "X-Amz-Date", "X-Amz-Security-Token"] {
      request.headers.remove(name)
    }
    request.headers["X-Amz-Date"] = amzDate
    if let token = credentials.sessionToken, signsSessionToken {
      request.headers["X-Amz-Security-Token"] = token
    }
    let payloadHash: String
    switch payload {
    case .unsigned:
      payloadHash = "UNSIGNED-PAYLOAD"
      request.headers["X-Amz-Content-SHA256"] = payloadHash
    case .hashedWithHeader:
      payloadHash = try RequestSigning.sha256Hex(of: request)
      request.headers["X-Amz-Content-SHA256"] = payloadHash
    default:
      payloadHash = try RequestSigning.sha256Hex(of: request)
    }
    let (headers, signedHeaders) = canonicalHeaders(of: request)
    let canonicalRequest = [
      request.method.rawValue, canonicalPath(of: request.url), Self.canonicalQuery(of: request.url),
      headers, signedHeaders, payloadHash,
    ].joined(separator: "\n")
    let scope = "\(day)/\(region)/\(service)/aws4_request"
    let stringToSign = [
      "AWS4-HMAC-SHA256", amzDate, scope,
      RequestSigning.hex(RequestSigning.sha256(Data(canonicalRequest.utf8))),
    ].joined(separator: "\n")
    var key = Data("AWS4\(credentials.secretAccessKey)".utf8)
    for part in [day, region, service, "aws4_request"] {
      key = RequestSigning.hmacSHA256(key: key, Data(part.utf8))
    }
    let signature = RequestSigning.hex(
      RequestSigning.hmacSHA256(key: key, Data(stringToSign.utf8)))
    request.headers["Authorization"] =
      "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope), "
      + "SignedHeaders=\(signedHeaders), Signature=\(signature)"
    if let token = credentials.sessionToken, !signsSessionToken {
      request.headers["X-Amz-Security-Token"] = token
    }
    // The secrets the signature is made of are no one else's to print.
    request.redaction = request.redaction.merging(Redaction(headers: ["X-Amz-Security-Token"]))
    return (request, canonicalRequest, stringToSign, signature)
  }

  /// Headers never signed: those a transport, a proxy or the client sets or changes on the way.
  static let unsignedHeaders: Set<String> = [
    "authorization", "user-agent", "x-amzn-trace-id", "expect", "connection",
    "transfer-encoding", "upgrade", "te", "keep-alive", "proxy-authorization",
    "proxy-connection", "accept-encoding",
  ]

  /// The canonical headers (`name:value\n` each, names in lower case and sorted, values trimmed
  /// with inner runs of white space made one space, repeated names joined with commas) and the
  /// signed header names (`host;x-amz-date`).
  private func canonicalHeaders(of request: HTTPRequest) -> (String, String) {
    var values: [String: [String]] = [:]
    for field in request.headers.fields {
      let name = field.name.lowercased()
      guard !Self.unsignedHeaders.contains(name), name != "host" else { continue }
      values[name, default: []].append(Self.collapsingSpaces(field.value))
    }
    values["host"] = [Self.hostHeader(of: request.url)]
    let names = values.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    let lines = names.map { "\($0):\(values[$0, default: []].joined(separator: ","))\n" }
    return (lines.joined(), names.joined(separator: ";"))
  }

  /// The `Host` a transport sends for `url`: its host, with the port when it is not the
  /// scheme's own.
  static func hostHeader(of url: URL) -> String {
    var host = url.host(percentEncoded: true) ?? ""
    if host.contains(":") && !host.hasPrefix("[") { host = "[\(host)]" }
    let standard = url.scheme?.lowercased() == "https" ? 443 : 80
    if let port = url.port, port != standard { return "\(host):\(port)" }
    return host
  }

  /// `value` trimmed, with each run of spaces, tabs and line breaks made one space.
  private static func collapsingSpaces(_ value: String) -> String {
    value.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" })
      .joined(separator: " ")
  }

  /// The canonical path: as sent, normalized when asked, then encoded (once more when asked).
  func canonicalPath(of url: URL) -> String {
    var path = url.path(percentEncoded: true)
    if path.isEmpty { path = "/" }
    if normalizesPath { path = Self.normalized(path) }
    if encodesPathTwice { return Self.encoded(path, keepingSlashes: true) }
    let decoded = path.removingPercentEncoding ?? path
    return Self.encoded(decoded, keepingSlashes: true)
  }

  /// `path` with its `.` and `..` segments resolved (RFC 3986 §5.2.4) and empty segments
  /// removed, keeping a trailing slash.
  static func normalized(_ path: String) -> String {
    var segments: [Substring] = []
    let parts = path.split(separator: "/", omittingEmptySubsequences: true)
    for part in parts {
      switch part {
      case ".": continue
      case "..": _ = segments.popLast()
      default: segments.append(part)
      }
    }
    let trailing =
      path.hasSuffix("/") || path.hasSuffix("/.") || path.hasSuffix("/..") || path == "."
    let joined = "/" + segments.joined(separator: "/")
    return trailing && !segments.isEmpty ? joined + "/" : joined
  }

  /// The canonical query: every name and value decoded, then encoded as AWS wants, sorted by
  /// name then value, `name=value` joined with `&` (a name without a value gets `=`).
  static func canonicalQuery(of url: URL) -> String {
    guard let query = url.query(percentEncoded: true), !query.isEmpty else { return "" }
    let pairs = query.split(separator: "&", omittingEmptySubsequences: true).map { item in
      let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      let name = String(parts[0]).removingPercentEncoding ?? String(parts[0])
      let value =
        parts.count > 1 ? (String(parts[1]).removingPercentEncoding ?? String(parts[1])) : ""
      return (encoded(name, keepingSlashes: false), encoded(value, keepingSlashes: false))
    }
    return
      pairs
      .sorted {
        $0.0 == $1.0
          ? $0.1.utf8.lexicographicallyPrecedes($1.1.utf8)
          : $0.0.utf8.lexicographicallyPrecedes($1.0.utf8)
      }
      .map { "\($0.0)=\($0.1)" }.joined(separator: "&")
  }

  /// `text` percent-encoded as SigV4 wants: every byte but `A-Z a-z 0-9 - _ . ~` (and `/` when
  /// `keepingSlashes`) as `%XY`, upper-case hex.
  static func encoded(_ text: String, keepingSlashes: Bool) -> String {
    var out = ""
    for byte in text.utf8 {
      switch byte {
      case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"),
        UInt8(ascii: "."), UInt8(ascii: "~"):
        out.unicodeScalars.append(Unicode.Scalar(byte))
      case UInt8(ascii: "/") where keepingSlashes:
        out.append("/")
      default:
        out += String(format: "%%%02X", Int(byte))
      }
    }
    return out
  }

  /// `20150830T123600Z` and `20150830` for `date`, in UTC.
  static func timestamps(_ date: Date) -> (String, String) {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
    let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
    let day = String(
      format: "%04d%02d%02d", c.year ?? 1970, c.month ?? 1, c.day ?? 1)
    return (
      day + String(format: "T%02d%02d%02dZ", c.hour ?? 0, c.minute ?? 0, c.second ?? 0), day
    )
  }
}
