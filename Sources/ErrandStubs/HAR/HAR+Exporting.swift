import Errand
import Foundation

/// Errand's requests and responses as HAR: what cassettes and a stub's journal export.
extension HAR.Request {
  /// The request as HAR writes it: its URL, headers, decoded query and body (as text when it is
  /// UTF-8, else as base64). Cookies stay in the `Cookie` header, which redaction hides.
  init(_ request: HTTPRequest) {
    let body = request.body ?? Data()
    self.init(
      method: request.method.rawValue, url: request.url.absoluteString,
      headers: request.headers.fields.map { HAR.Header(name: $0.name, value: $0.value) },
      queryString: (URLComponents(url: request.url, resolvingAgainstBaseURL: true)?.queryItems
        ?? []).map { HAR.QueryParameter(name: $0.name, value: $0.value ?? "") },
      postData: body.isEmpty
        ? nil
        : HAR.written(body) { text, encoding in
          HAR.PostData(
            mimeType: request.headers["Content-Type"] ?? "", text: text, encoding: encoding)
        },
      bodySize: body.count)
  }
}

extension HAR.Response {
  /// The response as HAR writes it: its status and reason phrase, headers, body (as text when it
  /// is UTF-8, else as base64) and the `Location` of a redirect.
  init(_ response: HTTPResponse) {
    let type = response.headers["Content-Type"] ?? "x-unknown"
    self.init(
      status: response.status, statusText: HTTPStatus.reasonPhrase(response.status),
      headers: response.headers.fields.map { HAR.Header(name: $0.name, value: $0.value) },
      content: response.body.isEmpty
        ? HAR.Content(mimeType: type)
        : HAR.written(response.body) { text, encoding in
          HAR.Content(size: response.body.count, mimeType: type, text: text, encoding: encoding)
        },
      redirectURL: response.headers["Location"] ?? "", bodySize: response.body.count)
  }
}

extension HAR {
  /// A body as HAR writes it: text when it is UTF-8, else base64 with the encoding `base64`.
  static func written<Value>(_ body: Data, _ make: (String, String?) -> Value) -> Value {
    if let text = String(data: body, encoding: .utf8) {
      return make(text, nil)
    }
    return make(body.base64EncodedString(), "base64")
  }

  /// A duration in milliseconds, as HAR's times are.
  static func milliseconds(_ duration: Duration) -> Double {
    let (seconds, attoseconds) = duration.components
    return Double(seconds) * 1000 + Double(attoseconds) / 1e15
  }
}
