import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(3))) struct StubJournalTests {
  @Test func recordsEveryRequestWithItsBody() async throws {
    let stub = StubTransport { _ in .status(204) }
    let client = client(stub)
    try await client.send(
      Endpoint<Void>(method: .post, path: "dogs", body: .json(Dog(name: "Rex"))))
    try await client.send(Endpoint<Void>(method: .delete, path: "dogs/1"))
    let sent = await stub.requests
    #expect(sent.map(\.method) == [.post, .delete])
    #expect(sent.first?.body == Data(#"{"name":"Rex"}"#.utf8))
    #expect(sent.last?.body == nil)
  }

  @Test func filtersByMatcher() async throws {
    let stub = StubTransport { _ in .status(200) }
    for path in ["/v1/dogs", "/v1/cats", "/v1/dogs/1", "/v1/dogs/2"] {
      _ = try await stub.send(request(.get, path))
    }
    let dogs = await stub.requests(matching: .path("/v1/dogs/{id}"))
    #expect(dogs.map(\.url.path) == ["/v1/dogs/1", "/v1/dogs/2"])
  }

  @Test func nextRequestHandsOutRequestsInOrder() async throws {
    let stub = StubTransport { _ in .status(200) }
    _ = try await stub.send(request(.get, "/a"))
    _ = try await stub.send(request(.get, "/b"))
    #expect(try await stub.nextRequest().url.path == "/a")
    #expect(try await stub.nextRequest().url.path == "/b")
  }

  @Test func nextRequestWaitsForTheNextOne() async throws {
    let stub = StubTransport { _ in .status(200) }
    let waiting = Task { try await stub.nextRequest() }
    try await Task.sleep(for: .milliseconds(20))
    _ = try await stub.send(request(.put, "/late"))
    let next: HTTPRequest = try await waiting.value
    #expect(next.method == .put)
    #expect(next.url.path == "/late")
  }

  @Test func nextRequestGivesUpAfterItsTimeout() async throws {
    let stub = StubTransport { _ in .status(200) }
    _ = try await stub.send(request(.get, "/a"))
    _ = try await stub.nextRequest()
    let error = try await #require(throws: StubTimeout.self) {
      _ = try await stub.nextRequest(timeout: .milliseconds(30))
    }
    #expect(error.waited == .milliseconds(30))
    #expect(error.received == 1)
    #expect(
      error.description
        == "StubTransport received no new request within 0.03 seconds (1 received in all).")
  }

  @Test func nextRequestStopsWhenCancelled() async throws {
    let stub = StubTransport()
    let waiting = Task { try await stub.nextRequest(timeout: .seconds(60)) }
    try await Task.sleep(for: .milliseconds(20))
    waiting.cancel()
    await #expect(throws: CancellationError.self) { _ = try await waiting.value }
  }
}

@Suite(.timeLimit(.minutes(3))) struct StubVerificationTests {
  @Test func listsRoutesNoRequestUsed() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/dogs", .status(200))
    let line = #line + 1
    await stub.on(.get, "/v1/cats", .status(200))
    _ = try await stub.send(request(.get, "/v1/dogs"))
    #expect(
      await stub.unusedRoutes == ["GET /v1/cats (registered at StubJournalTests.swift:\(line))"])
  }

  @Test func reportsUnusedRoutesAtTheirRegistration() async throws {
    let stub = StubTransport()
    let line = #line + 1
    await stub.on(.get, "/v1/cats", .status(200))
    await withKnownIssue {
      let unused = await stub.verifyAllRoutesUsed()
      #expect(unused.count == 1)
    } matching: { issue in
      issue.sourceLocation?.line == line
        && issue.sourceLocation?.fileName == "StubJournalTests.swift"
        && String(describing: issue).contains("GET /v1/cats was never used")
    }
  }

  @Test func recordsNothingWhenEveryRouteWasUsed() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/dogs", .status(200))
    _ = try await stub.send(request(.get, "/v1/dogs"))
    #expect(await stub.verifyAllRoutesUsed().isEmpty)
  }
}
