import Errand
import Foundation

/// A request that matched none of a ``StubTransport``'s routes.
public struct UnmatchedRequest: Error, CustomStringConvertible, LocalizedError {
  /// The request that matched nothing.
  public var request: HTTPRequest
  /// The routes that came closest, best first, with where they were registered.
  public var closestRoutes: [String]

  /// Names the request (credentials hidden) and lists the closest routes.
  public var description: String {
    var lines = ["StubTransport has no route for \(request)"]
    if !request.headers.isEmpty {
      lines.append("headers:")
      lines += request.headers.redacted().fields.map { "  \($0)" }
    }
    if let body = request.body, !body.isEmpty {
      let text = String(data: body.prefix(200), encoding: .utf8) ?? "\(body.count) bytes"
      lines.append("body: \(text)\(body.count > 200 ? "…" : "")")
    }
    if closestRoutes.isEmpty {
      lines.append("no routes are registered")
    } else {
      lines.append("closest routes:")
      lines += closestRoutes.map { "  \($0)" }
    }
    return lines.joined(separator: "\n")
  }

  /// The same text as ``description``.
  public var errorDescription: String? { description }
}
