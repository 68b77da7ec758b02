import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// `.times(n)`, `.atLeast(n)`, `.atMost(n)`, `.never()`: how often a route expects to be called,
/// reported at the line that registered it.
@Suite(.timeLimit(.minutes(3))) struct RouteCountTests {
  /// A route's count modifiers, the calls it gets, and the failure it reports (`nil`: none).
  struct CountCase: Sendable, CustomTestStringConvertible {
    var name: String
    var modify: @Sendable (StubResponse) -> StubResponse
    var calls: Int
    var failure: String?

    var testDescription: String { "\(name), \(calls) calls" }

    init(
      _ name: String, calls: Int, _ failure: String? = nil,
      _ modify: @escaping @Sendable (StubResponse) -> StubResponse
    ) {
      self.name = name
      self.modify = modify
      self.calls = calls
      self.failure = failure.map { "StubTransport route GET /v1/dogs \($0)" }
    }
  }

  static let cases: [CountCase] = [
    CountCase("times(2)", calls: 2) { $0.times(2) },
    CountCase("times(2)", calls: 3, "was expected 2 times and was called 3 times") { $0.times(2) },
    CountCase("times(2)", calls: 1, "was expected 2 times and was called 1 time") { $0.times(2) },
    CountCase("times(1)", calls: 0, "was expected 1 time and was called 0 times") { $0.times(1) },
    CountCase("atLeast(1)", calls: 1) { $0.atLeast(1) },
    CountCase("atLeast(1)", calls: 4) { $0.atLeast(1) },
    CountCase("atLeast(1)", calls: 0, "was expected at least 1 time and was called 0 times") {
      $0.atLeast(1)
    },
    CountCase("atLeast(2)", calls: 1, "was expected at least 2 times and was called 1 time") {
      $0.atLeast(2)
    },
    CountCase("atMost(3)", calls: 0) { $0.atMost(3) },
    CountCase("atMost(3)", calls: 3) { $0.atMost(3) },
    CountCase("atMost(3)", calls: 4, "was expected at most 3 times and was called 4 times") {
      $0.atMost(3)
    },
    CountCase("never()", calls: 0) { $0.never() },
    CountCase("never()", calls: 1, "must not be called and was called 1 time") { $0.never() },
    CountCase("times(0)", calls: 2, "must not be called and was called 2 times") { $0.times(0) },
    CountCase("atMost(0)", calls: 1, "must not be called and was called 1 time") { $0.atMost(0) },
    CountCase("never().allowingUnused()", calls: 1, "must not be called and was called 1 time") {
      $0.never().allowingUnused()
    },
    CountCase("atLeast(1).atMost(3)", calls: 2) { $0.atLeast(1).atMost(3) },
    CountCase("atLeast(1).atMost(3)", calls: 4, "was expected 1 to 3 times and was called 4 times")
    {
      $0.atLeast(1).atMost(3)
    },
    CountCase("atMost(3).atLeast(1)", calls: 0, "was expected 1 to 3 times and was called 0 times")
    {
      $0.atMost(3).atLeast(1)
    },
    CountCase("times(2).atMost(5)", calls: 5) { $0.times(2).atMost(5) },
    CountCase("times(2).allowingUnused()", calls: 0) { $0.times(2).allowingUnused() },
    CountCase(
      "times(2).allowingUnused()", calls: 3, "was expected at most 2 times and was called 3 times"
    ) { $0.times(2).allowingUnused() },
    CountCase(
      "allowingUnused().times(2)", calls: 3, "was expected at most 2 times and was called 3 times"
    ) { $0.allowingUnused().times(2) },
    CountCase("atLeast(2).allowingUnused()", calls: 0) { $0.atLeast(2).allowingUnused() },
    CountCase(
      "times(2) kept by delayed, withMetrics, settingCookies", calls: 3,
      "was expected 2 times and was called 3 times"
    ) {
      $0.times(2).delayed(by: .zero).withMetrics(TransferMetrics()).settingCookies("a=b")
    },
    CountCase("no modifier", calls: 0, "was never used") { $0 },
    CountCase("no modifier", calls: 5) { $0 },
    CountCase("allowingUnused()", calls: 0) { $0.allowingUnused() },
  ]

  @Test(arguments: cases)
  func aRouteIsCalledAsItExpectsOrReportedAtItsLine(_ count: CountCase) async throws {
    let stub = StubTransport()
    let line = #line + 1
    await stub.on(.get, "/v1/dogs", count.modify(.json([Dog(name: "Rex")])))
    for _ in 0..<count.calls {
      // A route called more often than it expects still answers.
      #expect(try await stub.send(request(.get, "/v1/dogs")).status == 200)
    }
    #expect(await stub.callCount(.get, "/v1/dogs") == count.calls)
    guard let failure = count.failure else {
      #expect(await stub.verifyExpectations() == [])
      return
    }
    var failures: [String] = []
    await withKnownIssue {
      failures = await stub.verifyExpectations()
    } matching: { issue in
      issue.sourceLocation?.line == line && issue.sourceLocation?.fileID == #fileID
        && issue.comments.map(\.rawValue) == [failure]
    }
    #expect(failures == ["\(failure) (registered at RouteCountTests.swift:\(line))"])
  }

  @Test func theStubbedTraitReportsACountAtTheLineThatRegisteredTheRoute() async throws {
    let test = try #require(Test.current)
    let line = #line + 4
    try await withKnownIssue {
      let trait: StubbedTrait = .stubbed
      try await trait.provideScope(for: test, testCase: nil) {
        await StubTransport.current.on(.post, "/v1/payments", .status(201).never())
        _ = try await APIClient(baseURL: base, transport: .stubbed).send(
          Endpoint<Data>(method: .post, path: "payments", decoding: .data))
      }
    } matching: { issue in
      issue.sourceLocation?.line == line
        && issue.comments.map(\.rawValue) == [
          "StubTransport route POST /v1/payments must not be called and was called 1 time"
        ]
    }
  }

  @Test(.stubbed) func aFailureCheckedInsideWithKnownIssueIsNotReportedAgainByTheTrait()
    async throws
  {
    let stub = StubTransport.current
    await stub.on(.get, "/v1/dogs", .json([Dog(name: "Rex")]).times(1))
    for _ in 0..<2 { _ = try await client(stub).send(Endpoint<[Dog]>(path: "dogs")) }
    var failures: [String] = []
    await withKnownIssue {
      failures = await stub.verifyExpectations()
    } matching: { issue in
      issue.comments.map(\.rawValue) == [
        "StubTransport route GET /v1/dogs was expected 1 time and was called 2 times"
      ]
    }
    #expect(failures.count == 1)
    // Returned again, not recorded again: the trait's check at the end records nothing.
    #expect(await stub.verifyExpectations() == failures)
  }

  @Test func verifyAllRoutesUsedLeavesOutRoutesThatMayGoUnused() async {
    let stub = StubTransport()
    await stub.on(.get, "/v1/a", .status(200).never())
    await stub.on(.get, "/v1/b", .status(200).atMost(2))
    await stub.on(.get, "/v1/c", .status(200).allowingUnused())
    #expect(await stub.unusedRoutes == [])
    #expect(await stub.verifyAllRoutesUsed() == [])
  }

  @Test func callCountCountsTheCallsItsRoutesAnswered() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/dogs/7", .status(404))
    await stub.on(.get, "/v1/dogs/{id}", .json(Dog(name: "Rex")))
    await stub.on(.post, "/v1/dogs", .status(201).atMost(1))
    await stub.on(.method(.post) && .path("/v1/dogs"), .status(409))
    for path in ["/v1/dogs/7", "/v1/dogs/1", "/v1/dogs/2", "/v1/dogs/7"] {
      _ = try await stub.send(request(.get, path))
    }
    for _ in 0..<3 { _ = try await stub.send(request(.post, "/v1/dogs")) }
    #expect(await stub.callCount(.get, "/v1/dogs/7") == 2)
    #expect(await stub.callCount(.get, "/v1/dogs/{id}") == 2)
    #expect(await stub.callCount(.get, "/v1/cats") == 0)
    // Two routes read `POST /v1/dogs`: the count is theirs together (the first answered all).
    #expect(await stub.callCount(for: .method(.post) && .path("/v1/dogs")) == 3)
    #expect(await stub.requests(matching: .path("/v1/dogs/{id}")).count == 4)
  }
}
