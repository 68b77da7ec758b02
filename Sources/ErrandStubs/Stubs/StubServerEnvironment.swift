import Foundation

/// How an app under test finds the stub server its UI test started: the test puts the server's
/// URL in the app's launch environment under ``key``, and the app reads it back at start with
/// ``baseURL(in:replacing:)``.
///
/// ```swift
/// // The app, at start:
/// let production = URL(string: "https://api.example.com/v1")!
/// let base =
///   StubServerEnvironment.baseURL(in: ProcessInfo.processInfo.environment, replacing: production)
///   ?? production
/// let client = APIClient(baseURL: base, transport: URLSessionTransport())
/// ```
///
/// Only a plain `http` URL of this machine's loopback interface is accepted (`127.0.0.1`,
/// `localhost` or `[::1]`, with a port and nothing else): a value that names any other host, a
/// user, a path, a query or `https` is ignored, so that an environment variable can never point
/// an app at a server elsewhere. The server itself is `LoopbackServer(serving:)`, in the
/// `LoopbackServer` module, whose `launchEnvironment` holds the entry.
public enum StubServerEnvironment: Sendable {
  /// The environment variable that holds the stub server's URL: `ERRAND_STUB_SERVER_URL`.
  public static let key = "ERRAND_STUB_SERVER_URL"

  /// The hosts of this machine's loopback interface that a stub server's URL may name.
  static let loopbackHosts: Set<String> = ["127.0.0.1", "localhost", "::1", "[::1]"]

  /// The stub server's URL, such as `http://127.0.0.1:49152`, when `environment` holds one
  /// under ``key`` that names this machine's loopback interface; `nil` otherwise.
  /// - Parameter environment: The process's environment, usually
  ///   `ProcessInfo.processInfo.environment`.
  /// - Returns: The server's URL, scheme, host and port only, or `nil`.
  public static func baseURL(in environment: [String: String]) -> URL? {
    environment[key].flatMap(loopbackURL(_:))
  }

  /// `apiURL` moved onto the stub server: its path and query kept, its scheme, host and port the
  /// server's (`https://api.example.com/v1` becomes `http://127.0.0.1:49152/v1`), so that the
  /// app sends the paths its routes were written for. `nil` when `environment` names no stub
  /// server, or one that is not on the loopback interface (see ``baseURL(in:)``).
  /// - Parameters:
  ///   - environment: The process's environment, usually `ProcessInfo.processInfo.environment`.
  ///   - apiURL: The base URL the app uses in production.
  /// - Returns: The base URL to use instead, or `nil`.
  public static func baseURL(in environment: [String: String], replacing apiURL: URL) -> URL? {
    guard let server = baseURL(in: environment),
      let serverParts = URLComponents(url: server, resolvingAgainstBaseURL: false),
      var parts = URLComponents(url: apiURL, resolvingAgainstBaseURL: true)
    else { return nil }
    parts.scheme = serverParts.scheme
    parts.user = nil
    parts.password = nil
    parts.percentEncodedHost = serverParts.percentEncodedHost
    parts.port = serverParts.port
    return parts.url
  }

  /// `text` as a stub server's URL when it is `http://` with a loopback host, a port and nothing
  /// else (an empty path or `/`); `nil` otherwise.
  static func loopbackURL(_ text: String) -> URL? {
    guard text.utf8.count <= 64,
      !text.unicodeScalars.contains(where: {
        CharacterSet.whitespacesAndNewlines.contains($0)
          || CharacterSet.controlCharacters.contains($0)
      }),
      let parts = URLComponents(string: text),
      parts.scheme?.lowercased() == "http",
      parts.user == nil, parts.password == nil,
      let host = parts.percentEncodedHost?.lowercased(), loopbackHosts.contains(host),
      parts.path.isEmpty || parts.path == "/",
      parts.query == nil, parts.fragment == nil,
      let port = parts.port, (1...65_535).contains(port)
    else { return nil }
    var normal = URLComponents()
    normal.scheme = "http"
    normal.percentEncodedHost = host == "::1" ? "[::1]" : host
    normal.port = port
    return normal.url
  }
}
