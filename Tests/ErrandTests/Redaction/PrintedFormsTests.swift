import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// Every way a request, a response or an error can be printed keeps the secrets hidden.
@Suite(.timeLimit(.minutes(3))) struct PrintedFormsTests {
  static let secrets = [
    "s3cret-token", "s3cret-key", "s3cret-query", "s3cret-password", "pa55word", "s3cret-cookie",
    "s3cret-gitlab",
  ]

  static let request = HTTPRequest(
    method: .post,
    url: URL(string: "https://ann:pa55word@api.example.com/v1/login?api_key=s3cret-query&page=2")!,
    headers: [
      "Authorization": "Bearer s3cret-token", "X-API-Key": "s3cret-key",
      "Content-Type": "application/json", "Cookie": "theme=dark; sid=s3cret-cookie",
      "PRIVATE-TOKEN": "s3cret-gitlab",
    ],
    body: Data(#"{"user":"ann","password":"s3cret-password"}"#.utf8),
    redaction: Redaction(headers: ["private-token"]).merging(.default))

  /// An error body that echoes every secret the request carried, in free text as servers do.
  static let echo = Data(
    (#"{"password":"s3cret-password","message":"bad token s3cret-token (key s3cret-key, "#
      + #"cookie s3cret-cookie, gitlab s3cret-gitlab, api_key=s3cret-query, user ann:pa55word)"}"#)
      .utf8)

  static var response: HTTPResponse {
    HTTPResponse(
      status: 302,
      headers: [
        "Location": "https://api.example.com/next?token=s3cret-token",
        "Content-Type": "application/json",
      ],
      body: echo, url: request.url, request: request)
  }

  static func dumped(_ value: Any) -> String {
    var text = ""
    dump(value, to: &text)
    return text
  }

  static let printers: [(String, @Sendable () -> String)] = [
    ("dump(request)", { dumped(request) }),
    ("dump(response)", { dumped(response) }),
    ("String(reflecting: request)", { String(reflecting: request) }),
    ("String(reflecting: response)", { String(reflecting: response) }),
    ("dump(unacceptableStatus)", { dumped(APIError.unacceptableStatus(response)) }),
    (
      "String(describing: unacceptableStatus)",
      {
        String(describing: APIError.unacceptableStatus(response))
      }
    ),
    ("localizedDescription", { APIError.unacceptableStatus(response).localizedDescription }),
    (
      "dump(Response)",
      {
        dumped(Response(value: 1, response: response, request: request))
      }
    ),
  ]

  @Test(arguments: printers.map(\.0))
  func noSecretIsPrinted(printer: String) throws {
    let print = try #require(Self.printers.first { $0.0 == printer }?.1)
    let text = print()
    for secret in Self.secrets {
      #expect(!text.contains(secret), "\(printer) printed \(secret):\n\(text)")
    }
    if printer.hasPrefix("dump") {
      #expect(text.contains("<redacted>"), "\(printer): \(text)")
    }
  }

  /// Headers on their own, printed every way: what ``Redaction/default`` names (credentials, API
  /// keys, a `Location`'s token) is hidden alike, whether they are printed, dumped or listed.
  static let headerPrinters: [(String, @Sendable (HTTPHeaders) -> String)] = [
    ("print(headers)", { "\($0)" }),
    ("String(reflecting: headers)", { String(reflecting: $0) }),
    ("dump(headers)", { dumped($0) }),
    ("print(headers.fields)", { "\($0.fields)" }),
    ("fields' descriptions", { $0.fields.map(\.description).joined(separator: "\n") }),
    ("dump(headers.fields)", { dumped($0.fields) }),
  ]

  @Test(arguments: headerPrinters.map(\.0))
  func headersPrintTheirDefaultSecretsHiddenEveryWay(printer: String) throws {
    let print = try #require(Self.headerPrinters.first { $0.0 == printer }?.1)
    let headers: HTTPHeaders = [
      "Authorization": "Bearer s3cret-token", "X-API-Key": "s3cret-key",
      "X-Auth-Token": "s3cret-auth", "Cookie": "sid=s3cret-cookie",
      "Location": "https://api.example.com/next?token=s3cret-location", "Accept": "text/plain",
    ]
    let text = print(headers)
    for secret in ["s3cret-token", "s3cret-key", "s3cret-auth", "s3cret-cookie"] {
      #expect(!text.contains(secret), "\(printer) printed \(secret):\n\(text)")
    }
    if !printer.contains("fields") {
      #expect(!text.contains("s3cret-location"), "\(printer): \(text)")
    }
    #expect(text.contains("text/plain"), "\(printer) hid what is not a secret: \(text)")
  }

  @Test func aRedactedBodyKeepsContentLengthTrue() {
    var response = HTTPResponse(
      status: 200, headers: ["Content-Type": "application/json", "Content-Length": "27"],
      body: Data(#"{"password":"long-secret"}"#.utf8))
    response.headers["Content-Length"] = String(response.body.count)
    let redacted = Redaction.default.redact(response)
    #expect(redacted.headers["Content-Length"] == String(redacted.body.count))
    #expect(redacted.body != response.body)
  }
}
