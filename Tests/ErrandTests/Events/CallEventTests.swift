import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// What listeners hear beyond the order of a call's steps: nothing secret, body progress
/// sampled, the cache's outcome, and no say over (or delay of) the call.
@Suite(.timeLimit(.minutes(3))) struct CallEventTests {
  static let base = url("https://api.example.com/v1/")

  @Test func eventsCarryNoSecrets() async throws {
    let listener = RecordingListener()
    let stub = StubTransport { _ in
      .status(
        401, body: Data("s3cret-token".utf8), headers: ["Set-Cookie": "id=s3cret-cookie"])
    }
    let client = APIClient(
      baseURL: Self.base, transport: stub,
      configuration: APIClient.Configuration(eventListeners: [listener]))
    let endpoint = Endpoint<Data>(
      path: "dogs", query: [URLQueryItem(name: "api_key", value: "s3cret-key")],
      headers: ["Authorization": "Bearer s3cret-token"], body: .json(["password": "s3cret-pw"]))
    _ = try? await client.send(endpoint)
    let events = await listener.eventsOfOneCall()
    #expect(
      events.map(\.kind.name) == [
        "callStarted", "requestBuilt", "attemptStarted", "responseHead", "callFailed",
      ])
    guard case .requestBuilt(let request) = events[1].kind else {
      Issue.record("expected the request, got \(events[1].kind)")
      return
    }
    #expect(request.body == nil)
    #expect(request.headers["Authorization"] == "<redacted>")
    #expect(request.url.absoluteString == "https://api.example.com/v1/dogs?api_key=%3Credacted%3E")
    let text = events.map { "\($0)" }.joined(separator: "\n")
    for secret in ["s3cret-token", "s3cret-cookie", "s3cret-key", "s3cret-pw"] {
      #expect(!text.contains(secret), "\(secret) leaked into: \(text)")
    }
  }

  /// Progress every 16 chunks, and once more at the end, before the call ends.
  @Test func bodyProgressIsSampled() async throws {
    let listener = RecordingListener()
    let chunks = (0..<40).map { Data(repeating: UInt8($0), count: 10) }
    let stub = StubTransport { _ in .chunks(chunks) }
    let client = APIClient(
      baseURL: Self.base, transport: stub,
      configuration: APIClient.Configuration(eventListeners: [listener]))
    let body = try await client.stream(Endpoint<Data>(path: "feed", decoding: .data)).collect()
    #expect(body.count == 400)
    let progress = await listener.eventsOfOneCall().compactMap { event -> [Int]? in
      switch event.kind {
      case .bodyProgress(let bytes, let count): [bytes, count]
      case .callEnded(let status, _): [status]
      default: nil
      }
    }
    #expect(progress == [[160, 16], [320, 32], [400, 40], [200]])
  }

  @Test func theCacheOutcomeIsTold() async throws {
    let listener = RecordingListener()
    let stub = StubTransport { _ in
      .status(200, body: Data("[]".utf8), headers: ["Cache-Control": "max-age=60"])
    }
    let client = APIClient(
      baseURL: Self.base, transport: stub,
      configuration: APIClient.Configuration(
        middleware: [CachingMiddleware(cache: HTTPCache())], eventListeners: [listener]))
    for _ in 0..<2 {
      _ = try await client.send(Endpoint<Data>(path: "dogs"))
    }
    let outcomes = [await listener.eventsOfOneCall(), await listener.eventsOfOneCall()].map {
      $0.compactMap { event -> CacheStatus? in
        if case .cacheOutcome(let status) = event.kind { status } else { nil }
      }
    }
    #expect(outcomes == [[.miss], [.hit]])
  }

  /// A failed call tells its listeners how (``CallFailure``): the step, the status or the
  /// `URLError` code, the attempts made, and the error's description, request and all.
  @Test(arguments: [
    (
      StubResponse.status(503), APIError.Kind.unacceptableStatus, Int?.some(503),
      URLError.Code?.none,
      "The server answered GET https://api.example.com/v1/dogs with HTTP 503 Service Unavailable "
        + "after 2 attempts."
    ),
    (
      .notConnected, .transport, nil, .notConnectedToInternet,
      "The server could not be reached for GET https://api.example.com/v1/dogs after 2 attempts: "
        + "the device is not connected to the internet (URLError -1009)."
    ),
    (
      .timedOut, .timedOut, nil, nil,
      "The request GET https://api.example.com/v1/dogs timed out after 2 attempts."
    ),
  ])
  func aFailedCallTellsHowItFailed(
    answer: StubResponse, kind: APIError.Kind, status: Int?, code: URLError.Code?,
    description: String
  ) async throws {
    let listener = RecordingListener()
    let retry = RetryMiddleware(
      policy: RetryPolicy(maxAttempts: 2, baseDelay: .seconds(1), jitter: .none),
      clock: ImmediateClock())
    let client = APIClient(
      baseURL: Self.base, transport: StubTransport { _ in answer },
      configuration: APIClient.Configuration(middleware: [retry], eventListeners: [listener]))
    let error = try await #require(throws: APIError.self) {
      try await client.send(Endpoint<Data>(path: "dogs"))
    }
    let events = await listener.eventsOfOneCall()
    guard case .callFailed(let failure) = events.last?.kind else {
      Issue.record("expected callFailed, got \(events.map(\.kind.name))")
      return
    }
    #expect(
      failure
        == CallFailure(
          kind: kind, status: status, urlErrorCode: code, attempts: 2, description: description))
    #expect(failure == CallFailure(error))
    #expect("\(failure)" == description)
  }

  /// A listener that implements the failure method taking the description still hears every
  /// failure.
  @Test func aListenerOfDescriptionsHearsFailures() async throws {
    let listener = DescriptionListener()
    let client = APIClient(
      baseURL: Self.base, transport: StubTransport { _ in .status(404) },
      configuration: APIClient.Configuration(eventListeners: [listener]))
    let error = try await #require(throws: APIError.self) {
      try await client.send(Endpoint<Data>(path: "dogs/7"))
    }
    var heard = listener.descriptions.makeAsyncIterator()
    #expect(await heard.next() == error.localizedDescription)
  }

  /// A listener that blocks, and one that throws, change nothing: the call returns its value
  /// while the blocked listener has not heard its first event; once released, it hears every
  /// event, in order.
  @Test func aListenerThatBlocksOrThrowsChangesNothing() async throws {
    let gate = DispatchSemaphore(value: 0)
    let blocked = BlockingListener(gate: gate)
    let stub = StubTransport { _ in .json(["Rex"]) }
    let client = APIClient(
      baseURL: Self.base, transport: stub,
      configuration: APIClient.Configuration(eventListeners: [blocked, ThrowingListener()]))
    for _ in 0..<3 {
      #expect(try await client.send(Endpoint<[String]>(path: "dogs")) == ["Rex"])
    }
    #expect(blocked.heard.withLock { $0 }.isEmpty)
    gate.signal()
    var names: [String] = []
    for _ in 0..<3 {
      names += await blocked.recording.eventsOfOneCall().map(\.kind.name)
    }
    let one = ["callStarted", "requestBuilt", "attemptStarted", "responseHead", "callEnded"]
    #expect(names == one + one + one)
  }
}

/// Blocks its queue on the first event until the gate opens.
private final class BlockingListener: EventListener {
  let gate: DispatchSemaphore
  let recording = RecordingListener()
  let heard = Locked<[String]>([])

  init(gate: DispatchSemaphore) {
    self.gate = gate
  }

  func receive(_ event: CallEvent) throws {
    if heard.withLock({ $0.isEmpty }) {
      gate.wait()
    }
    heard.withLock { $0.append(event.kind.name) }
    try recording.receive(event)
  }
}

private struct ThrowingListener: EventListener {
  struct Failure: Error {}
  func receive(_ event: CallEvent) throws { throw Failure() }
}

/// Hears failures by their descriptions only, as listeners written before ``CallFailure`` did.
private final class DescriptionListener: EventListener {
  let descriptions: AsyncStream<String>
  private let continuation: AsyncStream<String>.Continuation

  init() {
    (descriptions, continuation) = AsyncStream.makeStream(of: String.self)
  }

  func callFailed(_ event: CallEvent, error: String) throws {
    continuation.yield(error)
  }
}
