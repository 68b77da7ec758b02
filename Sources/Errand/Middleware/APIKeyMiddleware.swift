import Foundation

/// Adds an API key to endpoints that need authentication, in a header or a query parameter, and
/// hides it in every printed form of the request (its log lines, `cURLDescription`, errors).
///
/// ```swift
/// let key = APIKeyMiddleware(key: apiKey, in: .header("X-API-Key"))
/// let maps = APIKeyMiddleware(key: mapsKey, in: .queryParameter("key"))
/// ```
///
/// As with ``BearerAuthenticationMiddleware``, only endpoints with
/// ``Endpoint/requiresAuthentication`` get the key, and never a call the client keeps its
/// secrets from (an absolute URL on another origin). A redirect to another origin drops the
/// header, as it drops every header the request's redaction hides.
public struct APIKeyMiddleware: Middleware, CustomStringConvertible, CustomReflectable {
  /// Where the key goes.
  public struct Placement: Sendable, Hashable, CustomStringConvertible {
    let name: String
    let inQuery: Bool

    /// A header field of this name (`X-API-Key`).
    /// - Parameter name: The field's name.
    /// - Returns: The placement.
    public static func header(_ name: String) -> Placement {
      Placement(name: name, inQuery: false)
    }

    /// A query parameter of this name (`key`), replacing any of the same name.
    /// - Parameter name: The parameter's name.
    /// - Returns: The placement.
    public static func queryParameter(_ name: String) -> Placement {
      Placement(name: name, inQuery: true)
    }

    /// `header X-API-Key` or `query parameter key`.
    public var description: String { (inQuery ? "query parameter " : "header ") + name }
  }

  /// Where the key goes.
  public let placement: Placement
  private let key: String

  /// A middleware that sends `key`.
  /// - Parameters:
  ///   - key: The API key: never printed.
  ///   - placement: Where it goes.
  public init(key: String, in placement: Placement) {
    self.key = key
    self.placement = placement
  }

  /// Send the request, with the key when its endpoint needs it.
  public func intercept(
    _ request: HTTPRequest, next: @Sendable (HTTPRequest) async throws -> HTTPResponse
  ) async throws -> HTTPResponse {
    guard RequestContext.current?.requiresAuthentication == true else {
      return try await next(request)
    }
    var request = request
    if placement.inQuery {
      request.redaction = request.redaction.merging(
        Redaction(queryParameters: [placement.name]))
      if var components = URLComponents(url: request.url, resolvingAgainstBaseURL: true) {
        // The other parameters stay as written (a `+` in them keeps its meaning); only the
        // key's is added, encoded so that `+`, `&`, `=` and `#` in it arrive as themselves.
        let others = (components.percentEncodedQuery ?? "").split(separator: "&").filter {
          let name = $0.split(separator: "=", maxSplits: 1).first.map(String.init) ?? ""
          return (name.removingPercentEncoding ?? name) != placement.name
        }
        let item = [placement.name, key].map {
          $0.addingPercentEncoding(withAllowedCharacters: Self.queryValueAllowed) ?? ""
        }.joined(separator: "=")
        components.percentEncodedQuery = (others.map(String.init) + [item]).joined(separator: "&")
        if let url = components.url { request.url = url }
      }
    } else {
      request.redaction = request.redaction.merging(Redaction(headers: [placement.name]))
      request.headers[placement.name] = key
    }
    return try await next(request)
  }

  /// What a query name or value may hold unencoded: the unreserved characters alone.
  static let queryValueAllowed = CharacterSet(
    charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

  /// Where the key goes, never the key: `API key in header X-API-Key`.
  public var description: String { "API key in \(placement)" }

  /// The placement alone, for `dump` and debuggers.
  public var customMirror: Mirror { Mirror(self, children: ["placement": placement]) }
}
