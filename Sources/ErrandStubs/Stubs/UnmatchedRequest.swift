import Errand
import Foundation

/// A request that matched none of a ``StubTransport``'s routes.
public struct UnmatchedRequest: Error, CustomStringConvertible, LocalizedError {
  /// The request that matched nothing.
  public var request: HTTPRequest
  /// The routes that came closest, best first, with where they were registered.
  public var closestRoutes: [String]

  /// Create the error.
  /// - Parameters:
  ///   - request: The request that matched nothing.
  ///   - closestRoutes: The routes that came closest, best first.
  public init(request: HTTPRequest, closestRoutes: [String]) {
    self.request = request
    self.closestRoutes = closestRoutes
  }

  /// Names the request and lists the closest routes, with secrets hidden by the request's
  /// `redaction` and by `Redaction.default` (a narrower redaction does not show a token in a
  /// test report); long values, many headers and long differences are cut, so the report stays
  /// a few kilobytes whatever the request.
  public var description: String {
    let shown = request.reportRedaction.redact(request)
    var lines = [
      "StubTransport has no route for \(DiagnosticText.cut(request.reportedDescription, to: 500))"
    ]
    if !shown.headers.isEmpty {
      lines.append("headers:")
      lines += DiagnosticText.list(
        shown.headers.fields.map {
          "  \(DiagnosticText.cut(DiagnosticText.escaped($0.description)))"
        },
        noun: "headers")
    }
    if let body = shown.body, !body.isEmpty {
      // Scrubbed before it is cut: a secret the cut splits would no longer be found whole.
      let scrubbed = Redaction.scrub(request.reportRedaction.secretValues(in: request), from: body)
      let text = String(data: scrubbed.prefix(200), encoding: .utf8) ?? "\(body.count) bytes"
      lines.append("body: \(DiagnosticText.escaped(text))\(scrubbed.count > 200 ? "…" : "")")
    }
    if closestRoutes.isEmpty {
      lines.append("no routes are registered")
    } else {
      lines.append("closest routes:")
      lines += closestRoutes.map { "  \(DiagnosticText.cut($0, to: 8_000))" }
    }
    return lines.joined(separator: "\n")
  }

  /// The same text as ``description``.
  public var errorDescription: String? { description }
}

extension HTTPRequest {
  /// What the test kit's reports hide of this request: what its ``HTTPRequest/redaction`` hides,
  /// and what `Redaction.default` hides on top.
  package var reportRedaction: Redaction {
    redaction.merging(.default)
  }

  /// The request as a report names it: `GET https://api.example.com/v1/me?token=<redacted>`, with
  /// the secrets ``reportRedaction`` hides.
  package var reportedDescription: String {
    "\(method) \(reportRedaction.redact(url))"
  }
}
