import ErrandTesting
import Foundation
import LoopbackServer
import TestSupport
import Testing

@testable import Errand

/// Hostile probes of a reconnecting event stream, each through a stub and over sockets through
/// every transport: an `id` in an event the server never finished, an ID that is not ASCII,
/// secrets across a redirect and in every printed failure, and two streams of one client.
@Suite(.timeLimit(.minutes(3))) struct EventStreamHostileTests {
  static let endpoint = EventStreamConformanceTests.endpoint

  // MARK: The last event ID is set when an event ends (§9.2.6, dispatch step 1)

  /// A connection's last block, and the `Last-Event-ID` the next connection sends: an `id` takes
  /// effect when its block ends (its blank line), with or without data; the `id` of a block the
  /// connection cut off never does (the event it belongs to was not delivered, and a server
  /// resuming after it would skip that event for good).
  static let unfinished: [(String, String, String?)] = [
    ("an event cut off", "id: 2\ndata: b\n", "1"),
    ("an ID-only block cut off", "id: 2\n", "1"),
    ("an ID cleared in a block cut off", "id\n", "1"),
    ("an ID-only block that ended", "id: 2\n\n", "2"),
    ("an ID cleared in a block that ended", "id\n\n", nil),
  ]

  @Test(arguments: unfinished, EventStreamPath.allCases)
  func anIDTakesEffectWhenItsBlockEnds(row: (String, String, String?), path: EventStreamPath)
    async throws
  {
    let (_, tail, expected) = row
    let driver = ReconnectDriver()
    let feed = try await path.feed(configuration: driver.configuration) { _, index in
      index == 0 ? .events("id: 1\ndata: a\n\n" + tail) : .noContent
    }
    defer { feed.stop() }
    let outcome = await EventStreamConformanceTests.read(
      feed.client.events(Self.endpoint, reconnect: .default, onState: driver.onState))
    #expect(outcome.error == nil)
    #expect(outcome.events.map(\.data) == ["a"])
    #expect(feed.requests.map { $0.headers["Last-Event-ID"] } == [nil, expected])
  }

  /// An ID that is not ASCII is sent back as UTF-8 (§9.2.4), by every transport.
  @Test(arguments: EventStreamPath.allCases)
  func anIDThatIsNotASCIIIsSentAsUTF8(path: EventStreamPath) async throws {
    let id = "77☃ é"
    let driver = ReconnectDriver()
    let feed = try await path.feed(configuration: driver.configuration) { _, index in
      index == 0 ? .events("id: \(id)\ndata: a\n\n") : .noContent
    }
    defer { feed.stop() }
    let outcome = await EventStreamConformanceTests.read(
      feed.client.events(Self.endpoint, reconnect: .default, onState: driver.onState))
    #expect(outcome.error == nil)
    #expect(outcome.events.map(\.id) == [id])
    #expect(feed.requests.map { $0.headers["Last-Event-ID"] } == [nil, id])
  }

  // MARK: Secrets

  /// A reconnection redirected to another origin: the endpoint's credentials stay behind, and
  /// the `Last-Event-ID` goes along (as fetch sends it) unless the app names it a secret. The
  /// next reconnection starts again at the endpoint's origin, with its credentials.
  @Test(arguments: [false, true], EventStreamPath.allCases)
  func aRedirectToAnotherOriginCarriesNoSecret(idIsSecret: Bool, path: EventStreamPath)
    async throws
  {
    let driver = ReconnectDriver()
    var configuration = driver.configuration
    if idIsSecret { configuration.redaction.headers.insert("Last-Event-ID") }
    let (feed, other) = try await path.feeds(
      configuration: configuration,
      answer: { _, index, otherOrigin in
        switch index {
        case 0: .events("id: tok-1\ndata: a\n\n")
        case 1:
          FeedAnswer(
            status: 307,
            headers: [("Location", otherOrigin.appendingPathComponent("moved").absoluteString)])
        default: .noContent
        }
      }, otherAnswer: .events("data: b\n\n"))
    defer { feed.stop() }
    var endpoint = Self.endpoint
    endpoint.headers["X-API-Key"] = "key-1"
    endpoint.headers["Authorization"] = "Bearer tok"
    let outcome = await EventStreamConformanceTests.read(
      feed.client.events(endpoint, reconnect: .default, onState: driver.onState))
    #expect(outcome.error == nil)
    #expect(outcome.events.map(\.data) == ["a", "b"])
    let moved = other.withLock { $0 }
    #expect(moved.map(\.path) == ["/moved"])
    #expect(moved.map { $0.headers["X-API-Key"] } == [nil])
    #expect(moved.map { $0.headers["Authorization"] } == [nil])
    #expect(moved.map { $0.headers["Last-Event-ID"] } == [idIsSecret ? nil : "tok-1"])
    #expect(feed.requests.map { $0.headers["X-API-Key"] } == ["key-1", "key-1", "key-1"])
    #expect(feed.requests.map { $0.headers["Last-Event-ID"] } == [nil, "tok-1", "tok-1"])
  }

  /// Ways a reconnecting stream fails for good.
  enum Failure: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case status201, notAStream, eventTooLong, gaveUp, status500EchoingTheSecrets
    var testDescription: String { rawValue }

    func answer(to request: SeenRequest) -> FeedAnswer {
      switch self {
      case .status201: FeedAnswer(status: 201, body: Data("data: x\n\n".utf8))
      case .notAStream: FeedAnswer(headers: [("Content-Type", "text/plain")], body: Data("x".utf8))
      case .eventTooLong: .events("data: " + String(repeating: "x", count: 100) + "\n\n")
      case .gaveUp: .dropped
      case .status500EchoingTheSecrets:
        FeedAnswer(
          status: 500, headers: [("Content-Type", "text/plain")],
          body: Data(
            "you sent \(request.headers["Authorization"] ?? ""), \(request.headers["X-API-Key"] ?? "")"
              .utf8))
      }
    }
  }

  /// A stream whose request carries secrets (a bearer token, an API key, a token in the query)
  /// fails: no printed form of the error or of any state told shows one.
  @Test(arguments: Failure.allCases, EventStreamPath.allCases)
  func aFailurePrintsNoSecret(failure: Failure, path: EventStreamPath) async throws {
    let driver = ReconnectDriver()
    var configuration = driver.configuration
    configuration.maximumEventSize = 64
    let feed = try await path.feed(configuration: configuration) { request, _ in
      failure.answer(to: request)
    }
    defer { feed.stop() }
    let endpoint = Endpoint<Data>(
      path: "feed", query: [URLQueryItem(name: "access_token", value: "s3cret-q")],
      headers: ["Authorization": "Bearer s3cret-a", "X-API-Key": "s3cret-k"], decoding: .data)
    let states = Locked<[ConnectionState]>([])
    let events = feed.client.events(endpoint, reconnect: ReconnectPolicy(maximumAttempts: 0)) {
      state in
      states.withLock { $0.append(state) }
      driver.onState(state)
    }
    let outcome = await EventStreamConformanceTests.read(events)
    let error = try #require(outcome.error)
    var forms = ["\(error)", String(reflecting: error), error.localizedDescription]
    for state in states.withLock({ $0 }) {
      forms += ["\(state)", String(reflecting: state)]
      var dumped = ""
      dump(state, to: &dumped)
      forms.append(dumped)
    }
    var dumped = ""
    dump(error, to: &dumped)
    forms.append(dumped)
    #expect(feed.requests.first?.headers["X-API-Key"] == "s3cret-k")
    // The failure names its request (so a secret in it would show), its secrets hidden.
    #expect(error.localizedDescription.contains("access_token="), "\(error.localizedDescription)")
    for form in forms {
      #expect(!form.contains("s3cret"), "\(form)")
    }
  }

  // MARK: Two streams of one client

  /// Two streams of one client, read at once and each restarted: each gets its own events, and
  /// each request carries its own key and its own last event ID.
  @Test(arguments: EventStreamPath.allCases)
  func twoStreamsOfOneClientKeepTheirOwn(path: EventStreamPath) async throws {
    let configuration = APIClient.Configuration(timeout: nil, clock: TestClock())
    let feed = try await path.feed(configuration: configuration) { request, _ in
      let name = request.path.split(separator: "/").last.map(String.init) ?? "?"
      let key = request.headers["X-API-Key"] ?? "no key"
      guard let last = request.headers["Last-Event-ID"] else {
        return .events("id: \(name)-1\ndata: \(name) first, \(key)\n\n", stalls: true)
      }
      return .events("data: \(name) after \(last), \(key)\n\n", stalls: true)
    }
    defer { feed.stop() }
    let names = ["a", "b"]
    let reads = names.map { name in
      let events = feed.client.events(
        Endpoint<Data>(
          path: "feed/\(name)", headers: ["X-API-Key": "key-\(name)"], decoding: .data),
        reconnect: .default)
      return Task {
        var iterator = events.makeAsyncIterator()
        let first = try await iterator.next()?.data
        events.restart()
        let second = try await iterator.next()?.data
        return [first, second]
      }
    }
    for (name, read) in zip(names, reads) {
      #expect(
        try await read.cancellableValue == [
          "\(name) first, key-\(name)", "\(name) after \(name)-1, key-\(name)",
        ])
    }
    #expect(feed.requests.count == 4)
  }
}
