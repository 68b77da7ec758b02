import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// A key as a URL's user name, and a query value secret only to the client's redaction: hidden in
/// every form Errand prints, events included.
@Suite(.timeLimit(.minutes(3))) struct UserInfoHostileTests {
  /// An absolute URL whose secrets only the client knows of: a key as the user name, and a query
  /// parameter the client's redaction names.
  static let address = "https://sk_live_USERKEY@files.example.com/v1/x?session=SESSION-9"

  @Test func noPrintedFormShowsTheURLsUserOrAClientSecret() async throws {
    let listener = RecordingListener()
    var configuration = APIClient.Configuration(eventListeners: [listener])
    configuration.redaction.queryParameters.insert("session")
    let stub = StubTransport { _ in .status(500, body: Data("no".utf8)) }
    let client = APIClient(baseURL: base, transport: stub, configuration: configuration)
    let url = try #require(URL(string: Self.address))
    let error = await #expect(throws: APIError.self) {
      try await client.send(Endpoint<Data>(url: url, decoding: .data))
    }
    let failure = try #require(error)
    let events = await listener.eventsOfOneCall()
    let request = try #require(failure.context?.request)
    var dumped = ""
    dump(failure, to: &dumped)
    let printed: [String] =
      [
        failure.localizedDescription, String(describing: failure), dumped, request.description,
        request.cURLDescription,
      ] + events.map { "\($0.endpoint) \($0)" }
    for text in printed {
      #expect(!text.contains("USERKEY"), "\(text)")
      #expect(!text.contains("SESSION-9"), "\(text)")
    }
    #expect(events.first?.endpoint.contains("redacted@files.example.com") == true)
  }
}
