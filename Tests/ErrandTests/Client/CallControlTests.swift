import ErrandTesting
import Foundation
import TestSupport
import Testing

@testable import Errand

/// `cancelAll()`, `cancelAll(tagged:)` and `inFlight`: every kind of call is listed while it
/// runs, ends with `.cancelled` when its client cancels it, and leaves the list when it ends.
@Suite(.timeLimit(.minutes(3))) struct CallControlTests {
  static let base = url("https://api.example.com/v1/")

  /// A kind of call, made against a stub whose every route hangs (before the head) or, for the
  /// streamed kinds, stalls after the head.
  enum Kind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case send, upload, stream, download, events, reconnectingEvents, pages
    var testDescription: String { rawValue }

    /// What `inFlight` lists for it.
    var listed: Set<InFlightCall.Kind> {
      switch self {
      case .send, .upload, .pages: [.buffered]
      case .stream, .download, .events: [.streamed]
      case .reconnectingEvents: [.eventStream, .streamed]
      }
    }

    /// Whether the stub answers with a head and then stalls (else it never answers).
    var stallsAfterHead: Bool { listed != [.buffered] }

    /// Make the call on `client`, to an endpoint tagged `tag`, reading any body to its end.
    func make(on client: APIClient, tag: String, scratch: URL) async throws {
      let endpoint = Endpoint<Data>(path: "\(rawValue)", decoding: .data).tagged(tag)
      switch self {
      case .send:
        _ = try await client.send(endpoint)
      case .upload:
        var upload = endpoint
        upload.method = .post
        upload.body = .data(Data(count: 1_000))
        _ = try await client.send(upload) { _ in }
      case .stream:
        _ = try await client.stream(endpoint).collect()
      case .download:
        _ = try await client.download(endpoint, to: scratch.appendingPathComponent(tag))
      case .events:
        for try await _ in try await client.events(endpoint) {}
      case .reconnectingEvents:
        for try await _ in client.events(endpoint, reconnect: .default) {}
      case .pages:
        for try await _ in client.pages(endpoint) {}
      }
    }
  }

  static func stub() async -> StubTransport {
    let stub = StubTransport()
    for kind in Kind.allCases {
      let route = "/v1/\(kind.rawValue)"
      if kind.stallsAfterHead {
        await stub.on(
          .get, route,
          .stalledAfterHeaders(headers: ["Content-Type": "text/event-stream"]))
      } else {
        await stub.on(.path(route), .hang)
      }
    }
    return stub
  }

  static func client(_ stub: StubTransport, middleware: [any Middleware] = []) -> APIClient {
    APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(timeout: nil, middleware: middleware))
  }

  /// Whom a call meets on its way: only Errand's own parts (the call runs in its caller's task,
  /// each of its waits ended by `cancelAll()`), or a middleware of the app's as well (the call
  /// runs in a task of its own, which `cancelAll()` cancels).
  enum Chain: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case errandsOwn, withTheAppsMiddleware
    var testDescription: String { rawValue }

    var middleware: [any Middleware] {
      switch self {
      case .errandsOwn: [RetryMiddleware(), LoggingMiddleware(handler: { _ in })]
      case .withTheAppsMiddleware: [PassesOn()]
      }
    }
  }

  /// A middleware of the app's that passes every request on.
  struct PassesOn: Middleware {
    func intercept(
      _ request: HTTPRequest, next: @Sendable (HTTPRequest) async throws -> HTTPResponse
    ) async throws -> HTTPResponse {
      try await next(request)
    }
  }

  /// 100 calls of every kind, running, are listed; `cancelAll()` ends each with `.cancelled`,
  /// and none is listed after, whether the calls run in their callers' tasks or in their own.
  @Test(arguments: Kind.allCases, Chain.allCases)
  func cancelAllEndsEveryKindOfCall(_ kind: Kind, chain: Chain) async throws {
    let stub = await Self.stub()
    let client = Self.client(stub, middleware: chain.middleware)
    #expect(
      client.endsItsOwnWaits(for: Endpoint<Data>(path: "x")) == (chain == .errandsOwn),
      "the call does not run where this case means it to")
    let scratch = FileManager.default.temporaryDirectory.appendingPathComponent(
      "call-control-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: scratch) }
    let count = 100
    let calls = (0..<count).map { index in
      Task { try await kind.make(on: client, tag: "user-\(index)", scratch: scratch) }
    }
    defer { for call in calls { call.cancel() } }
    let listedPerCall = kind.listed.count
    #expect(await eventually { client.inFlight.count == count * listedPerCall })
    #expect(Set(client.inFlight.map(\.kind)) == kind.listed)
    let listed = try #require(client.inFlight.first)
    #expect(listed.tags.count == 1 && listed.tags.first?.hasPrefix("user-") == true)
    #expect(listed.endpoint == "GET \(kind.rawValue)" || listed.endpoint == "POST \(kind.rawValue)")
    #expect(client.cancelAll() == count * listedPerCall)
    for call in calls {
      let error = await #expect(throws: APIError.self) { try await call.value }
      #expect(error?.kind == .cancelled)
    }
    #expect(await eventually { client.inFlight.isEmpty })
  }

  /// A call that returns is no longer listed, and a call started after `cancelAll()` runs.
  @Test func aCallStartedAfterCancelAllRuns() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/dogs", .json(["Rex"]))
    let client = Self.client(stub)
    #expect(client.cancelAll() == 0)
    let dogs = try await client.send(Endpoint<[String]>(path: "dogs"))
    #expect(dogs == ["Rex"])
    #expect(client.inFlight.isEmpty)
  }

  /// `cancelAll(tagged:)` ends the tagged calls only; the others go on and complete.
  @Test func cancellingATagEndsItsCallsOnly() async throws {
    let stub = StubTransport()
    let gate = AsyncGate()
    await stub.on(.get, "/v1/feed", .hang)
    await stub.on(
      .get, "/v1/dogs",
      .handler { _, _ in
        await gate.wait()
        return .json(["Rex"])
      })
    let client = Self.client(stub)
    let feed = Task {
      try await client.send(Endpoint<Data>(path: "feed", decoding: .data).tagged("home"))
    }
    let dogs = Task { try await client.send(Endpoint<[String]>(path: "dogs").tagged("profile")) }
    defer {
      feed.cancel()
      dogs.cancel()
    }
    #expect(await eventually { client.inFlight.count == 2 })
    #expect(client.cancelAll(tagged: "home") == 1)
    let error = await #expect(throws: APIError.self) { try await feed.value }
    #expect(error?.kind == .cancelled)
    #expect(client.inFlight.map(\.tags) == [["profile"]])
    await gate.open()
    #expect(try await dogs.value == ["Rex"])
    #expect(client.inFlight.isEmpty)
  }

  /// A streamed call is listed until its body has been read to its end, and leaves the list
  /// when its reader drops it.
  @Test func aStreamIsListedUntilItsBodyEnds() async throws {
    let stub = StubTransport()
    await stub.on(.get, "/v1/feed", .chunks([Data("a".utf8), Data("b".utf8)]))
    let client = Self.client(stub)
    var stream: ResponseStream? = try await client.stream(
      Endpoint<Data>(path: "feed", decoding: .data))
    #expect(client.inFlight.map(\.kind) == [.streamed])
    #expect(try await stream?.collect() == Data("ab".utf8))
    #expect(client.inFlight.isEmpty)

    stream = try await client.stream(Endpoint<Data>(path: "feed", decoding: .data))
    #expect(client.inFlight.count == 1)
    stream = nil
    #expect(client.inFlight.isEmpty)
  }

  /// A call cancelled by its caller leaves the list; `cancelAll()` then finds nothing.
  @Test func aCallItsCallerCancelledIsNotListed() async throws {
    let stub = await Self.stub()
    let client = Self.client(stub)
    let call = Task {
      try await client.send(Endpoint<Data>(path: "send", decoding: .data))
    }
    #expect(await eventually { client.inFlight.count == 1 })
    call.cancel()
    let error = await #expect(throws: APIError.self) { try await call.value }
    #expect(error?.kind == .cancelled)
    #expect(client.inFlight.isEmpty)
    #expect(client.cancelAll() == 0)
  }

  /// The description names the call, its kind and its tags, and never a redacted query value.
  @Test func aListedCallIsDescribedWithoutItsSecrets() async throws {
    let stub = await Self.stub()
    let client = Self.client(stub)
    var endpoint = Endpoint<Data>(path: "send", decoding: .data).tagged("b", "a")
    endpoint.url = url("https://api.example.com/v1/send?api_key=SECRET-123")
    let call = Task { try await client.send(endpoint) }
    defer { call.cancel() }
    #expect(await eventually { client.inFlight.count == 1 })
    let listed = try #require(client.inFlight.first)
    #expect(!listed.description.contains("SECRET-123"))
    #expect(listed.description.hasPrefix("#\(listed.id) GET https://api.example.com/v1/send?"))
    #expect(listed.description.hasSuffix(" (buffered) [a, b]"))
  }
}
