import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// `@Test(.stubbed)`: a stub per test, checked when the test ends.
@Suite(.timeLimit(.minutes(3))) struct StubbedTraitTests {
  /// The shortest complete test: stub, call, check the value and the request.
  @Test(.stubbed) func listsDogs() async throws {
    await StubTransport.current.on(.get, "/v1/dogs", .json([Dog(name: "Rex")]))
    let dogs = try await APIClient(baseURL: base, transport: .stubbed).send(
      Endpoint<[Dog]>(path: "dogs"))
    #expect(dogs == [Dog(name: "Rex")])
  }

  @Test(.stubbed, arguments: 0..<20)
  func eachCaseHasItsOwnStub(index: Int) async throws {
    let stub = StubTransport.current
    await stub.on(.get, "/v1/dogs/\(index)", .json(Dog(name: "Dog \(index)")))
    #expect(
      try await client(stub).send(Endpoint<Dog>(path: "dogs/\(index)")) == Dog(name: "Dog \(index)")
    )
    #expect(await stub.requests.count == 1)
  }

  @Test(.stubbed(clock: .immediate)) func routesMayBeAllowedToGoUnused() async throws {
    await StubTransport.current.on(.get, "/v1/config", .json(["feature": true]).allowingUnused())
    await StubTransport.current.on(
      .get, "/v1/dogs", .json([Dog(name: "Rex")]).delayed(by: .seconds(60)))
    _ = try await APIClient(baseURL: base, transport: .stubbed).send(Endpoint<[Dog]>(path: "dogs"))
  }

  @Test func anUnusedRouteIsAnIssueAtTheLineThatRegisteredIt() async throws {
    let test = try #require(Test.current)
    let line = #line + 4
    try await withKnownIssue {
      let trait: StubbedTrait = .stubbed
      try await trait.provideScope(for: test, testCase: nil) {
        await StubTransport.current.on(.get, "/v1/never", .status(200))
      }
    } matching: { issue in
      issue.sourceLocation?.line == line
        && issue.comments.contains { $0.rawValue.contains("/v1/never was never used") }
    }
  }

  @Test func anUnmatchedRequestIsAnIssueEvenWhenTheTestSwallowsTheError() async throws {
    let test = try #require(Test.current)
    try await withKnownIssue {
      let trait: StubbedTrait = .stubbed
      try await trait.provideScope(for: test, testCase: nil) {
        _ = try? await APIClient(baseURL: base, transport: .stubbed).send(
          Endpoint<Data>(path: "cats", decoding: .data))
      }
    } matching: { issue in
      issue.comments.contains {
        $0.rawValue == "StubTransport has no route for GET https://api.example.com/v1/cats"
      }
    }
  }

  @Test func currentOutsideAStubbedTestSaysSo() async {
    await withKnownIssue {
      _ = await StubTransport.current.requests
    } matching: { issue in
      issue.comments.contains { $0.rawValue.contains("only inside a test marked @Test(.stubbed)") }
    }
  }
}
