import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// A token provider whose refreshes are counted and can be made to fail or wait.
actor Tokens: TokenProvider {
  struct RefreshFailure: Error, LocalizedError {
    var errorDescription: String? { "the refresh token has expired" }
  }

  private var token: String?
  private let fresh: String
  private let fails: Bool
  private var gate: [CheckedContinuation<Void, Never>] = []
  private let gated: Bool
  private(set) var refreshes = 0

  init(current: String?, fresh: String = "new", fails: Bool = false, gated: Bool = false) {
    self.token = current
    self.fresh = fresh
    self.fails = fails
    self.gated = gated
  }

  func currentToken() async throws -> String? { token }

  func refreshToken() async throws -> String {
    refreshes += 1
    if gated {
      await withCheckedContinuation { gate.append($0) }
    }
    try await Task.sleep(for: .milliseconds(10))
    if fails {
      throw RefreshFailure()
    }
    token = fresh
    return fresh
  }

  func open() {
    for waiter in gate {
      waiter.resume()
    }
    gate = []
  }

  var waiting: Int { gate.count }
}

@Suite(.timeLimit(.minutes(3))) struct BearerAuthenticationTests {
  /// A stub that accepts only `Bearer new`.
  private func server() -> StubTransport {
    StubTransport { request in
      request.headers["Authorization"] == "Bearer new" ? .json(Dog(name: "Rex")) : .status(401)
    }
  }

  private func client(_ stub: StubTransport, _ auth: BearerAuthenticationMiddleware) -> APIClient {
    APIClient(
      baseURL: url("https://api.example.com"), transport: stub,
      configuration: APIClient.Configuration(middleware: [auth]))
  }

  private let secured = Endpoint<Dog>(path: "me", requiresAuthentication: true)

  @Test func hundredConcurrent401sShareOneRefresh() async throws {
    let tokens = Tokens(current: "old")
    let auth = BearerAuthenticationMiddleware(provider: tokens)
    let stub = server()
    let client = client(stub, auth)
    let dogs = try await withThrowingTaskGroup(of: Dog.self) { group in
      for _ in 0..<100 {
        group.addTask { try await client.send(secured) }
      }
      return try await group.reduce(into: []) { $0.append($1) }
    }
    #expect(dogs.count == 100)
    #expect(dogs.allSatisfy { $0 == Dog(name: "Rex") })
    #expect(await tokens.refreshes == 1)
    #expect(await auth.refreshCount == 1)
    let sent = await stub.requests.compactMap { $0.headers["Authorization"] }
    #expect(sent.count <= 200)
    #expect(sent.filter { $0 == "Bearer new" }.count == 100)
  }

  @Test func aFailedRefreshFailsEveryWaitingRequest() async throws {
    let tokens = Tokens(current: "old", fails: true)
    let client = client(server(), BearerAuthenticationMiddleware(provider: tokens))
    let messages = await withTaskGroup(of: String.self) { group in
      for _ in 0..<100 {
        group.addTask {
          do {
            _ = try await client.send(secured)
            return "succeeded"
          } catch let APIError.transport(underlying as AuthenticationError) {
            return underlying.localizedDescription
          } catch {
            return "other: \(error)"
          }
        }
      }
      return await group.reduce(into: []) { $0.append($1) }
    }
    #expect(
      Set(messages) == ["the access token could not be refreshed: the refresh token has expired"])
    #expect(messages.count == 100)
    #expect(await tokens.refreshes == 1)
  }

  @Test func endpointsWithoutAuthenticationGetNoTokenAndNoRefresh() async throws {
    let tokens = Tokens(current: "old")
    let stub = StubTransport { _ in .status(401) }
    let client = client(stub, BearerAuthenticationMiddleware(provider: tokens))
    let error = await #expect(throws: APIError.self) {
      try await client.send(Endpoint<Dog>(path: "public"))
    }
    #expect(error?.kind == .unacceptableStatus)
    #expect(await stub.requests.count == 1)
    #expect(await stub.requests.first?.headers["Authorization"] == nil)
    #expect(await tokens.refreshes == 0)
  }

  @Test func aRejectedFreshTokenIsNotRetriedAgain() async throws {
    let tokens = Tokens(current: "old", fresh: "also-rejected")
    let stub = server()
    let client = client(stub, BearerAuthenticationMiddleware(provider: tokens))
    let error = await #expect(throws: APIError.self) { try await client.send(secured) }
    #expect(error?.kind == .unacceptableStatus)
    #expect(
      await stub.requests.compactMap { $0.headers["Authorization"] } == [
        "Bearer old", "Bearer also-rejected",
      ])
    #expect(await tokens.refreshes == 1)
  }

  @Test func refreshLimitStopsAStormUntilTheWindowPasses() async throws {
    let tokens = Tokens(current: "old", fresh: "still-bad")
    let clock = TestClock()
    let auth = BearerAuthenticationMiddleware(
      provider: tokens, refreshLimit: 2, refreshWindow: .seconds(60), clock: clock)
    let client = client(StubTransport { _ in .status(401) }, auth)
    for _ in 0..<2 {
      let error = await #expect(throws: APIError.self) { try await client.send(secured) }
      #expect(error?.kind == .unacceptableStatus)
    }
    let error = await #expect(throws: APIError.self) { try await client.send(secured) }
    guard case .transport(let underlying as AuthenticationError) = error else {
      Issue.record("expected a refresh limit error, got \(String(describing: error))")
      return
    }
    #expect(
      underlying.localizedDescription
        == "the access token was refreshed 2 times within 60.0 seconds and the server still rejects it; "
        + "not refreshing again until the window passes")
    #expect(
      error?.localizedDescription.hasPrefix(
        "The request could not be authenticated: the access token was refreshed 2 times") == true)
    #expect(await tokens.refreshes == 2)

    await clock.advance(by: .seconds(59))
    let stillLimited = await #expect(throws: APIError.self) { try await client.send(secured) }
    #expect(stillLimited?.underlyingError is AuthenticationError)
    #expect(await tokens.refreshes == 2)

    await clock.advance(by: .seconds(1))
    let afterWindow = await #expect(throws: APIError.self) { try await client.send(secured) }
    #expect(afterWindow?.kind == .unacceptableStatus && afterWindow?.response?.status == 401)
    #expect(await tokens.refreshes == 3)
  }

  @Test func withoutATokenItRefreshesFirst() async throws {
    let tokens = Tokens(current: nil)
    let stub = server()
    #expect(
      try await client(stub, BearerAuthenticationMiddleware(provider: tokens)).send(secured)
        == Dog(name: "Rex"))
    #expect(await stub.requests.compactMap { $0.headers["Authorization"] } == ["Bearer new"])
  }

  @Test func cancellingOneWaiterLeavesTheRefreshToTheOthers() async throws {
    let tokens = Tokens(current: "old", gated: true)
    let auth = BearerAuthenticationMiddleware(provider: tokens)
    let client = client(server(), auth)
    let cancelled = Task { try await client.send(secured) }
    let patient = Task { try await client.send(secured) }
    while await tokens.waiting == 0 {
      try await Task.sleep(for: .milliseconds(1))
    }
    cancelled.cancel()
    let error = await #expect(throws: APIError.self) { try await cancelled.cancellableValue }
    #expect(error?.kind == .cancelled)
    await tokens.open()
    #expect(try await patient.cancellableValue == Dog(name: "Rex"))
    #expect(await tokens.refreshes == 1)
  }
}
