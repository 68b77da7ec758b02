import Foundation

extension APIClient {
  /// Fetch a paginated list page by page, as the loop asks for them.
  ///
  /// By default the next page is the first `rel="next"` of the response's `Link` fields
  /// (RFC 8288), fetched as an absolute-URL endpoint like the first; pass `next` to follow a
  /// cursor instead. The pages end when there is no next page, or when a next page would repeat
  /// one already fetched (the same method, URL, headers and body, leaving out those made afresh
  /// for each call such as an idempotency key; a URL compared in its RFC 3986 normal
  /// form, so `API.Example.com`, `:443` or `%2f` name the page that `api.example.com`, no port
  /// or `%2F` do).
  ///
  /// A next page at another origin, on a host not in ``Configuration/trustedHosts``, gets no
  /// credentials and no header but the safe ones (``Configuration/crossOriginHeaders``, and those
  /// that describe the request, such as `Content-Type`), whether the client, the endpoint or a
  /// middleware supplies it, and no ``Endpoint/requiresAuthentication``.
  ///
  /// ```swift
  /// for try await page in client.pages(Endpoint<[Dog]>(path: "dogs")) {
  ///   show(page.value)
  /// }
  /// // A cursor in the body:
  /// client.pages(Endpoint<DogPage>(path: "dogs")) { page in
  ///   page.value.cursor.map { Endpoint<DogPage>(path: "dogs", query: [URLQueryItem(name: "cursor", value: $0)]) }
  /// }
  /// ```
  /// - Parameter first: The first page's endpoint.
  /// - Returns: The pages, each with its response.
  public nonisolated func pages<Value: Sendable>(_ first: Endpoint<Value>) -> Pages<Value> {
    Pages(client: self, first: first, next: nil)
  }

  /// Fetch a paginated list page by page, finding each next page with `next` (a cursor in the
  /// body, a page number); see ``pages(_:)``.
  /// - Parameters:
  ///   - first: The first page's endpoint.
  ///   - next: The endpoint of the page after a response, or `nil` after the last page.
  /// - Returns: The pages, each with its response.
  public nonisolated func pages<Value: Sendable>(
    _ first: Endpoint<Value>, next: @escaping @Sendable (Response<Value>) -> Endpoint<Value>?
  ) -> Pages<Value> {
    Pages(client: self, first: first, next: next)
  }
}

extension Endpoint {
  /// The page after `response` by its `Link` fields' first `rel="next"`: this endpoint (method,
  /// headers, decoding, authentication) at that URL; `nil` when there is none. When the link
  /// leaves the origin of `request` for a host the client does not trust, or leaves HTTPS for
  /// plain HTTP (even to a trusted host), the endpoint withholds its headers: after the
  /// middleware, only the client's ``APIClient/Configuration/crossOriginHeaders`` and the headers
  /// that describe the request stay, whoever set them (the endpoint, the client or a middleware).
  /// A user and password in the link are dropped: as in a redirect's `Location`, what a server
  /// writes there never becomes credentials. An endpoint with an ``idempotencyKey`` gives the
  /// next page a generated key of its own.
  func nextLink(
    after response: HTTPResponse, of request: HTTPRequest, trustedHosts: Set<String>
  ) -> Endpoint? {
    // RFC 8288 §3.2: an `anchor` makes a link about another resource; a `next` anchored
    // anywhere but this response is not this list's next page.
    let context = response.url ?? request.url
    guard
      var url = LinkHeader(response.headers, relativeTo: context).links.first(where: { link in
        link.relations.contains("next")
          && link.parameters["anchor"].map {
            URL(string: $0, relativeTo: context)?.absoluteURL == context.absoluteURL
          } ?? true
      })?.url
    else { return nil }
    if url.user != nil || url.password != nil,
      var components = URLComponents(url: url, resolvingAgainstBaseURL: true)
    {
      components.user = nil
      components.password = nil
      url = components.url ?? url
    }
    var next = self
    next.url = url
    next.path = ""
    next.query = []
    if next.idempotencyKey != nil {
      // Another page is another call: a key of its own, never the one the first page sent.
      next.idempotencyKey = .generated
      next.headers.remove(IdempotencyKey.fieldName)
    }
    let downgrades =
      request.url.scheme?.lowercased() == "https" && url.scheme?.lowercased() == "http"
    if downgrades
      || (!RedirectPolicy.isSameOrigin(url, request.url)
        && !trustedHosts.contains(url.host?.lowercased() ?? ""))
    {
      next.withholdsSecrets = true
    }
    return next
  }
}

/// The pages of a paginated list, fetched one at a time as they are read; see
/// ``APIClient/pages(_:next:)``.
public struct Pages<Value: Sendable>: AsyncSequence, Sendable {
  /// A page, with its response.
  public typealias Element = Response<Value>

  let client: APIClient
  let first: Endpoint<Value>
  let next: (@Sendable (Response<Value>) -> Endpoint<Value>?)?

  /// Fetches the pages in order.
  public struct AsyncIterator: AsyncIteratorProtocol {
    let client: APIClient
    var upcoming: Endpoint<Value>?
    let next: (@Sendable (Response<Value>) -> Endpoint<Value>?)?
    /// The pages fetched so far, to stop at a `next` that points back: a 128-bit digest of
    /// each request's method, URL, headers and body rather than the request (a cursor can be a
    /// kilobyte), so that a long walk costs 16 bytes a page.
    var fetched: Set<PageDigest> = []
    /// Why the page after the last one returned cannot be fetched: thrown by the next call.
    var pendingError: (any Error)?

    /// The next page, or `nil` after the last.
    /// - Returns: The page.
    /// - Throws: ``APIError``, as ``APIClient/response(for:)`` does. A next page that cannot be
    ///   requested (a `Link` to an `ftp:` URL, say) does not cost the page that named it: that
    ///   page is returned, and the following call throws ``APIError/invalidRequest(_:)``.
    public mutating func next() async throws -> Response<Value>? {
      if let pendingError {
        self.pendingError = nil
        throw pendingError
      }
      guard let endpoint = upcoming else { return nil }
      upcoming = nil
      let page = try await client.response(for: endpoint)
      fetched.insert(PageDigest(page.request))
      let configuration = client.configuration
      let following =
        next.map { $0(page) }
        ?? endpoint.nextLink(
          after: page.response, of: page.request, trustedHosts: configuration.trustedHosts)
      if let following {
        do {
          let request = try client.makeRequest(for: following)
          upcoming = fetched.contains(PageDigest(request)) ? nil : following
        } catch {
          pendingError = error
        }
      }
      return page
    }
  }

  /// An iterator over the pages.
  /// - Returns: The iterator.
  public func makeAsyncIterator() -> AsyncIterator {
    AsyncIterator(client: client, upcoming: first, next: next)
  }
}

/// The first 128 bits of the SHA-256 digest of a page's request (its method, URL, headers and
/// body: a cursor in a `POST` body or a header makes another page at the same URL): what
/// ``Pages`` keeps of each page it fetched (two requests share one with a chance of about
/// 2^-128). The URL is digested in a normal form (RFC 3986 §6.2.2, §6.2.3): the scheme and
/// host lowercased, a default port and the fragment dropped, percent-encodings' hex digits
/// uppercased; so a next link that names a fetched page another way (`API.Example.com`,
/// `:443`, `%2f`) is that page.
struct PageDigest: Hashable, Sendable {
  private let high: UInt64
  private let low: UInt64

  init(_ request: HTTPRequest) {
    var text = Data("\(request.method.rawValue) \(Self.normalized(request.url))\n".utf8)
    // The headers too (a cursor may travel in one), but not those made afresh for every call:
    // a generated idempotency key or trace id would make every page look new.
    for field in request.headers.fields.map({ ($0.name.lowercased(), $0.value) }).sorted(by: <)
    where !Self.perCallHeaders.contains(field.0) {
      text.append(Data("\(field.0): \(field.1)\n".utf8))
    }
    text.append(Data("\n".utf8))
    if let body = request.body {
      text.append(body)
    } else if let file = request.bodyFile {
      text.append(Data("file \(file.absoluteString)".utf8))
    }
    let digest = SHA256Digest.hash(text)
    var high: UInt64 = 0
    var low: UInt64 = 0
    for (index, byte) in digest.prefix(16).enumerated() {
      if index < 8 {
        high = high << 8 | UInt64(byte)
      } else {
        low = low << 8 | UInt64(byte)
      }
    }
    self.high = high
    self.low = low
  }

  /// Headers a request gets afresh for every call, left out of the digest.
  static let perCallHeaders = InFlightSharing.perCallHeaders.union([
    IdempotencyKey.fieldName.lowercased()
  ])

  /// `url` in the normal form the digest is taken of.
  static func normalized(_ url: URL) -> String {
    guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
      return url.absoluteString
    }
    let scheme = components.scheme?.lowercased()
    components.scheme = scheme
    components.percentEncodedHost = components.percentEncodedHost?.lowercased()
    if (scheme == "https" && components.port == 443) || (scheme == "http" && components.port == 80)
    {
      components.port = nil
    }
    components.fragment = nil
    components.percentEncodedPath = uppercasingHex(components.percentEncodedPath)
    components.percentEncodedQuery = components.percentEncodedQuery.map(uppercasingHex)
    return components.string ?? url.absoluteString
  }

  /// `text` with the two hex digits after each `%` uppercased.
  private static func uppercasingHex(_ text: String) -> String {
    guard text.utf8.contains(UInt8(ascii: "%")) else { return text }
    var bytes = Array(text.utf8)
    var index = 0
    while index + 2 < bytes.count {
      let digits = bytes[index + 1...index + 2]
      if bytes[index] == UInt8(ascii: "%"), digits.allSatisfy({ $0.isHexDigit }) {
        for offset in 1...2 where bytes[index + offset] >= UInt8(ascii: "a") {
          bytes[index + offset] -= 32
        }
        index += 3
      } else {
        index += 1
      }
    }
    return String(decoding: bytes, as: UTF8.self)
  }
}

extension UInt8 {
  /// Whether the byte is an ASCII hex digit, in either case.
  fileprivate var isHexDigit: Bool {
    (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self)
      || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(self)
      || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(self)
  }
}
