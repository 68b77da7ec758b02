import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// A transport failure prints no secret in any form: its description, `String(describing:)`,
/// string interpolation or `dump`, even though URLSession stores the raw URL in the error.
@Suite(.timeLimit(.minutes(3))) struct TransportErrorSecretsTests {
  @Test func noFormOfATransportErrorShowsTheURLsSecrets() async throws {
    let stub = StubTransport { request in
      let raw = request.url
      let underlying = NSError(
        domain: NSURLErrorDomain, code: URLError.cannotConnectToHost.rawValue,
        userInfo: [NSURLErrorFailingURLErrorKey: raw])
      return .error(
        URLError(
          .cannotConnectToHost,
          userInfo: [
            NSURLErrorFailingURLErrorKey: raw, "NSErrorFailingURLStringKey": raw.absoluteString,
            NSUnderlyingErrorKey: underlying,
          ]))
    }
    let client = APIClient(
      baseURL: url("https://ann:pw-s3cret@api.example.com/v1"), transport: stub)
    let endpoint = Endpoint<Data>(
      path: "dogs", query: [URLQueryItem(name: "access_token", value: "t0k3n-s3cret")])
    let error = try await #require(throws: APIError.self) { try await client.send(endpoint) }
    var dumped = ""
    dump(error, to: &dumped)
    let forms = [
      error.localizedDescription, String(describing: error), "\(error)",
      String(reflecting: error), dumped,
    ]
    for form in forms {
      #expect(!form.contains("s3cret"), "\(form)")
    }
    #expect(error.urlError?.failingURL?.host == "api.example.com")
    #expect(
      error.localizedDescription
        == "The server could not be reached for GET https://redacted@api.example.com/v1/dogs?"
        + "access_token=<redacted>: nothing accepted the connection at api.example.com (URLError -1004)."
    )
  }
}
