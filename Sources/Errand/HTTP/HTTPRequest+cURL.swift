import Foundation

extension HTTPRequest {
  /// The request as a `curl` command to paste into a terminal, with secrets hidden by the
  /// request's ``redaction``.
  public var cURLDescription: String {
    cURLDescription(redaction: redaction)
  }

  /// The request as a `curl` command, with secrets hidden.
  /// - Parameter redaction: Which headers, query values and body fields to hide.
  /// - Returns: The command, one option per line.
  public func cURLDescription(redaction: Redaction) -> String {
    var lines = ["curl -X \(method.rawValue) \(Self.quote(redaction.redact(url)))"]
    for field in redaction.redact(headers) {
      lines.append("-H \(Self.quote("\(field.name): \(field.value)"))")
    }
    if let body, !body.isEmpty {
      let shown = redaction.redact(body: body, contentType: headers["Content-Type"])
      if let text = String(data: shown, encoding: .utf8), !text.contains("\0") {
        lines.append("--data-binary \(Self.quote(text))")
      } else {
        lines.append("--data-binary '<\(body.count) bytes of binary data>'")
      }
    }
    if let timeout {
      lines.append("--max-time \(timeout.decimalSeconds)")
    }
    return lines.joined(separator: " \\\n  ")
  }

  /// Quote for a POSIX shell: in single quotes, with each `'` written as `'\''`.
  private static func quote(_ text: String) -> String {
    "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
  }
}
