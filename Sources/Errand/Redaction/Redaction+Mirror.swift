import Foundation

extension HTTPRequest: CustomReflectable {
  /// What `dump(_:)` and debuggers show: every field, with secrets hidden by
  /// ``Redaction/default``.
  public var customMirror: Mirror {
    let shown = Redaction.default.redact(self)
    return Mirror(
      self,
      children: [
        "method": method.rawValue, "url": url.redactedString, "headers": shown.headers,
        "body": Redaction.preview(shown.body), "bodyFile": bodyFile?.path as Any,
        "timeout": timeout as Any, "maximumResponseSize": maximumResponseSize as Any,
      ], displayStyle: .struct)
  }
}

extension HTTPResponse: CustomReflectable {
  /// What `dump(_:)` and debuggers show: every field, with secrets hidden by
  /// ``Redaction/default``.
  public var customMirror: Mirror {
    let shown = Redaction.default.redact(self)
    return Mirror(
      self,
      children: [
        "status": status, "headers": shown.headers, "body": Redaction.preview(shown.body),
        "url": url?.redactedString as Any, "request": request as Any, "attempts": attempts,
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
