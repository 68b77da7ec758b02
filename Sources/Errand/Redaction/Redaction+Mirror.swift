import Foundation

extension HTTPRequest: CustomReflectable {
  /// What `dump(_:)` and debuggers show: every field, with secrets hidden by ``redaction``.
  public var customMirror: Mirror {
    let shown = redaction.redact(self)
    return Mirror(
      self,
      children: [
        "method": method.rawValue, "url": redaction.redact(url), "headers": shown.headers,
        "body": Redaction.preview(shown.body), "bodyFile": bodyFile?.path as Any,
        "timeout": timeout as Any, "maximumResponseSize": maximumResponseSize as Any,
      ], displayStyle: .struct)
  }
}

extension HTTPResponse: CustomReflectable {
  /// What `dump(_:)` and debuggers show: every field, with secrets hidden by the request's
  /// ``HTTPRequest/redaction`` (else ``Redaction/default``), and every secret value the request
  /// carried scrubbed from the body.
  public var customMirror: Mirror {
    let redaction = request?.redaction ?? .default
    let shown = redaction.redact(self)
    return Mirror(
      self,
      children: [
        "status": status, "headers": shown.headers, "body": Redaction.preview(shown.body),
        "url": url.map { redaction.redact($0) } as Any, "request": request as Any,
        "attempts": attempts,
        "streamed": bodyStream != nil,
      ], displayStyle: .struct)
  }
}

extension Redaction {
  /// A body for a debugger: its size, and its text as error messages quote it.
  static func preview(_ body: Data?) -> String {
    guard let body, !body.isEmpty else { return "empty" }
    return "\(body.count) bytes"
      + (APIError.bodyPreview(body, limit: 1_000).map { ": \($0)" } ?? "")
  }
}
