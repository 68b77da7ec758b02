import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// The one redaction engine: what it hides, what it keeps, and inputs that must not break it.
@Suite(.timeLimit(.minutes(3))) struct RedactionTests {
  @Test(arguments: [
    (
      "application/x-www-form-urlencoded", "user=ann&password=s3cret&token=abc",
      "user=ann&password=<redacted>&token=<redacted>"
    ),
    (
      "application/x-www-form-urlencoded", "&password=s3cret&&=&user=ann&",
      "&password=<redacted>&&=&user=ann&"
    ),
    (
      "application/json", #"{"a":{"refresh_token":"x","b":[{"secret":"y"}]}}"#,
      #"{"a":{"refresh_token":"<redacted>","b":[{"secret":"<redacted>"}]}}"#
    ),
    (
      "application/json", "{\n  \"z\": 1,\n  \"a\": [true, null]\n}",
      "{\n  \"z\": 1,\n  \"a\": [true, null]\n}"
    ),
    (
      "application/json", #"{"next":"https://x.example/p?page=2&token=abc"}"#,
      #"{"next":"https://x.example/p?page=2&token=<redacted>"}"#
    ),
    ("text/plain", "password=kept because not a form", "password=kept because not a form"),
  ])
  func redactsBodiesKeepingTheirOrder(contentType: String, body: String, expected: String) {
    let redacted = Redaction.default.redact(body: Data(body.utf8), contentType: contentType)
    #expect(String(decoding: redacted, as: UTF8.self) == expected)
  }

  @Test func namesAddedInAnyCaseMatchInAnyCase() {
    var redaction = Redaction(headers: [], queryParameters: [], bodyFields: [])
    redaction.headers.insert("X-Session")
    redaction.queryParameters.insert("PIN")
    redaction.bodyFields.insert("Password")
    let request = HTTPRequest(
      method: .post, url: url("https://x.example/a?pin=1234&b=2"),
      headers: ["x-SESSION": "abc", "Content-Type": "application/json"],
      body: Data(#"{"PASSWORD":"s3cret"}"#.utf8))
    let shown = redaction.redact(request)
    #expect(shown.headers["X-Session"] == "<redacted>")
    #expect(shown.url.absoluteString == "https://x.example/a?pin=%3Credacted%3E&b=2")
    #expect(String(decoding: shown.body ?? Data(), as: UTF8.self) == #"{"PASSWORD":"<redacted>"}"#)
    #expect(redaction.headers == ["x-session"])
  }

  @Test func customNamesReachTheCURLCommand() {
    var redaction = Redaction.default
    redaction.headers.insert("X-Session")
    redaction.queryParameters.insert("pin")
    let request = HTTPRequest(
      url: url("https://x.example/a?PIN=1234&b=2"), headers: ["x-session": "abc"])
    let curl = request.cURLDescription(redaction: redaction)
    #expect(
      curl
        == "curl -X GET 'https://x.example/a?PIN=<redacted>&b=2' \\\n  -H 'x-session: <redacted>'")
  }

  /// Empty query items used to crash every printer.
  @Test(arguments: [
    ("https://x.example/a?a=1&", "https://x.example/a?a=1&"),
    ("https://x.example/a?=", "https://x.example/a?="),
    ("https://x.example/a?&", "https://x.example/a?&"),
    ("https://x.example/a?token=abc&&b", "https://x.example/a?token=<redacted>&&b"),
    ("https://x.example/a&?", "https://x.example/a&?"),
  ])
  func emptyQueryItemsAreKeptAsWritten(raw: String, expected: String) throws {
    let request = HTTPRequest(url: try #require(URL(string: raw)))
    #expect(Redaction.default.redact(request.url) == expected)
    #expect(request.description == "GET \(expected)")
    #expect(request.cURLDescription == "curl -X GET '\(expected)'")
    #expect(UnmatchedRequest(request: request, closestRoutes: []).description.contains(expected))
  }

  @Test func jsonNestedTooDeeplyIsHiddenNotWalked() {
    let depth = 100_000
    let body = Data(
      (String(repeating: "[", count: depth) + String(repeating: "]", count: depth)).utf8)
    let redacted = Redaction.default.redact(body: body, contentType: "application/json")
    #expect(
      String(decoding: redacted, as: UTF8.self)
        == "<200000 bytes of JSON nested too deeply to redact>")
  }

  @Test func unmatchedRequestsHideEveryDefaultSecret() {
    let request = HTTPRequest(
      method: .post, url: url("https://api.example.com/v1/login?api_key=k3y"),
      headers: ["X-API-Key": "k3y-header", "Content-Type": "application/json"],
      body: Data(#"{"user":"ann","password":"s3cret"}"#.utf8))
    let text = UnmatchedRequest(request: request, closestRoutes: []).description
    for secret in ["k3y", "s3cret"] {
      #expect(!text.contains(secret), "\(text)")
    }
    #expect(text.contains(#"body: {"user":"ann","password":"<redacted>"}"#), "\(text)")
  }

  @Test func responsesLoseSecretHeadersAndBodyFields() {
    let response = HTTPResponse(
      status: 200, headers: ["Set-Cookie": "id=1", "Content-Type": "application/json"],
      body: Data(#"{"access_token":"t0k3n","expires":3600}"#.utf8),
      url: url("https://x.example/token?code=abc"))
    let shown = Redaction.default.redact(response)
    #expect(shown.headers["Set-Cookie"] == "<redacted>")
    #expect(
      String(decoding: shown.body, as: UTF8.self)
        == #"{"access_token":"<redacted>","expires":3600}"#)
    #expect(shown.url?.absoluteString == "https://x.example/token?code=%3Credacted%3E")
  }

  /// A URL that does not parse (a space in the host; older Apple systems reject spaces and
  /// non-ASCII anywhere) still has its password and secret query values hidden, as text.
  @Test(arguments: [
    (
      "https://exa mple.com/a?token=s3cret-t&page=2#top",
      "https://exa mple.com/a?token=<redacted>&page=2#top"
    ),
    ("https://ann:pa55word@exa mple.com/?x=1", "https://redacted@exa mple.com/?x=1"),
    ("https://KEY-12345@exa mple.com/", "https://redacted@exa mple.com/"),
    ("/next page?api_key=s3cret-k", "/next page?api_key=<redacted>"),
  ])
  func aURLThatDoesNotParseIsRedactedAsText(text: String, shown: String) {
    #expect(Redaction.default.redact(urlText: text) == shown)
    let headers = Redaction.default.redact(["Location": text, "Referer": text])
    #expect(headers["Location"] == shown)
    #expect(headers["Referer"] == shown)
    if text.contains("://") {  // links in bodies are absolute URLs
      let body = Redaction.default.redact(
        body: Data(#"{"next":"\#(text)"}"#.utf8), contentType: "application/json")
      #expect(String(decoding: body, as: UTF8.self) == #"{"next":"\#(shown)"}"#)
    }
  }
}
