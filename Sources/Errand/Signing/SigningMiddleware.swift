import Foundation

/// Signs every request with a ``RequestSigner`` exactly as the transport sends it: whatever order
/// the middleware are written in, the client runs it after every other one, a
/// ``CachingMiddleware`` included, so nothing changes a request after its signature. A retry, and
/// a revalidation the cache sends, is signed again, at its own time.
///
/// ```swift
/// let signing = SigningMiddleware(
///   AWSSignatureV4(credentials: credentials, region: "eu-west-1", service: "execute-api"))
/// let client = APIClient(
///   baseURL: base, transport: URLSessionTransport(),
///   configuration: .init(middleware: [RetryMiddleware(), signing]))
/// ```
///
/// The headers the signer adds or changes are hidden wherever Errand prints the request (they
/// join its ``HTTPRequest/redaction``), and so stay behind when a redirect leaves the origin:
/// a signature for one origin is never shown to another. A call that withholds the client's
/// secrets (a next page at an origin the app did not choose) is not signed at all. A query item a signer adds is hidden
/// when ``Redaction/queryParameters`` names it (`signature` and `sig` are, by default).
///
/// A redirect the transport follows is not signed again: within the origin (or to a trusted
/// host) its request carries the first one's signature, made for the first URL and the first
/// `Cookie` field (a cookie the redirect set joins the hop's field afterwards), so a service
/// that checks the whole request may refuse it; at another origin it carries none. A call the
/// app makes to the new URL itself is signed as any call.
public struct SigningMiddleware: Middleware, CustomStringConvertible {
  /// What signs the requests.
  public let signer: any RequestSigner
  /// The current date, which each request is signed at.
  let now: @Sendable () -> Date

  /// Sign every request with `signer`.
  /// - Parameters:
  ///   - signer: What signs the requests.
  ///   - now: The current date each request is signed at; the system's by default.
  public init(_ signer: any RequestSigner, now: @escaping @Sendable () -> Date = { Date() }) {
    self.signer = signer
    self.now = now
  }

  /// Sign `request`, hide what the signature added, and send it on.
  /// - Parameters:
  ///   - request: The request as the transport will send it.
  ///   - next: Sends the signed request.
  /// - Returns: The answer.
  /// - Throws: What the signer throws (a body file that cannot be read), or what `next` throws.
  public func intercept(
    _ request: HTTPRequest, next: @Sendable (HTTPRequest) async throws -> HTTPResponse
  ) async throws -> HTTPResponse {
    var signed = try await signer.sign(request, at: now())
    let added = signed.headers.fields.filter { field in
      !request.headers.values(for: field.name).contains(field.value)
    }
    signed.redaction.headers.formUnion(added.map(\.name))
    return try await next(signed)
  }

  /// The signer's own description (never its keys).
  public var description: String {
    "SigningMiddleware(\(signer))"
  }
}
