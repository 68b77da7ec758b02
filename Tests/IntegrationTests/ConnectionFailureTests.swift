import Errand
import ErrandTesting
import Foundation
import LoopbackServer
import TestSupport
import Testing

/// Broken connections surface as `.transport` with the URLError that explains them.
@Suite(.timeLimit(.minutes(3))) struct ConnectionFailureTests {
  @Test func connectionRefused() async throws {
    let refusing = try RefusingPort()
    let port = refusing.port
    let client = liveClient(refusing.url)
    let error = await #expect(throws: APIError.self) {
      _ = try await client.send(Endpoint<Data>(path: "dogs"))
    }
    let underlying = try #require(error?.urlError)
    #expect(underlying.code == .cannotConnectToHost)
    #expect(
      error?.localizedDescription
        == "The server could not be reached for GET http://127.0.0.1:\(port)/dogs: nothing accepted the "
        + "connection at 127.0.0.1:\(port) (URLError -1004).")
  }

  // A server that closes without sending a status line: curl, under URLSession on Linux, reports
  // .badServerResponse; Apple's loader reports .networkConnectionLost. Either is a transport error
  // with "The request failed".
  @Test(arguments: [
    (ScriptedResponse.Ending.closeAfterBodyBytes(500), [URLError.Code.networkConnectionLost]),
    (.closeAfterBodyBytes(0), [.networkConnectionLost]),
    (.resetAfterBodyBytes(500), [.networkConnectionLost]),
    (.closeWithoutResponse, [.badServerResponse, .networkConnectionLost]),
  ])
  func brokenResponsesAreTransportErrors(ending: ScriptedResponse.Ending, codes: [URLError.Code])
    async throws
  {
    let server = try LoopbackServer { _ in
      ScriptedResponse(body: patternBytes(1_000), ending: ending)
    }
    defer { server.stop() }
    let error = await #expect(throws: APIError.self) {
      _ = try await liveClient(server.baseURL).send(Endpoint<Data>(path: "dogs"))
    }
    #expect(error?.kind == .transport)
    let underlying = try #require(error?.urlError, "\(String(describing: error))")
    #expect(codes.contains(underlying.code))
    #expect(
      error?.localizedDescription.hasPrefix(
        "The request failed for GET \(server.url("/dogs").absoluteString): ") == true)
  }
}
