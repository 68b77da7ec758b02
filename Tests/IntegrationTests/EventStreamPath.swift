import Errand
import ErrandTesting
import Foundation
import LoopbackServer
import TestSupport
import Testing

/// A request as a scripted feed saw it.
struct SeenRequest: Sendable {
  var path: String
  /// The query, without its `?`; `nil` for none.
  var query: String?
  var headers: HTTPHeaders
}

/// One answer of a scripted feed.
struct FeedAnswer: Sendable {
  var status = 200
  var headers: [(String, String)] = [("Content-Type", "text/event-stream")]
  var body = Data()
  /// After the body, the answer neither ends nor sends more, until the client lets go.
  var stalls = false
  /// The connection is lost before the head: nothing else of the answer is sent.
  var dropsBeforeTheHead = false

  /// An event stream whose body is `wire`.
  static func events(_ wire: String, stalls: Bool = false) -> FeedAnswer {
    FeedAnswer(body: Data(wire.utf8), stalls: stalls)
  }

  /// `204 No Content`: the end of a reconnecting stream.
  static let noContent = FeedAnswer(status: 204, headers: [])

  /// The connection is lost before the head.
  static let dropped = FeedAnswer(dropsBeforeTheHead: true)

  /// The answer as a loopback server sends it. A stalled one sends its body, then a comment
  /// of the same length after an hour's wait that the client never sees through.
  var scripted: ScriptedResponse {
    if dropsBeforeTheHead { return ScriptedResponse(ending: .closeWithoutResponse) }
    guard stalls else { return ScriptedResponse(status: status, headers: headers, body: body) }
    let comment = Data((":" + String(repeating: "x", count: max(0, body.count - 2)) + "\n").utf8)
    return ScriptedResponse(
      status: status, headers: headers, body: body + comment, delayMidBody: .seconds(3600))
  }

  /// The answer as a stub gives it.
  var stubbed: StubResponse {
    if dropsBeforeTheHead { return .connectionLost }
    let fields = HTTPHeaders(headers.map { HTTPHeaders.Field(name: $0.0, value: $0.1) })
    if stalls {
      return .stalledAfterHeaders(body: body, status: status, headers: fields)
    }
    return .response(HTTPResponse(status: status, headers: fields, body: body))
  }
}

/// How an event stream reaches the client: through a stub, or over a socket through one of
/// the production transports. Each reconnection rule must hold on every path.
enum EventStreamPath: Sendable, CaseIterable, CustomTestStringConvertible {
  case stub
  case socket(TransportKind)

  static var allCases: [EventStreamPath] { [.stub] + TransportKind.allCases.map { .socket($0) } }

  var testDescription: String {
    switch self {
    case .stub: "stub"
    case .socket(let transport): transport.rawValue
    }
  }

  /// A feed on this path that answers the `n`th request (from 0) with `answer(request, n)`.
  func feed(
    configuration: APIClient.Configuration,
    answer: @escaping @Sendable (SeenRequest, Int) -> FeedAnswer
  ) async throws -> Feed {
    let seen = Locked<[SeenRequest]>([])
    let record = { @Sendable (request: SeenRequest) -> Int in
      seen.withLock { seen in
        seen.append(request)
        return seen.count - 1
      }
    }
    switch self {
    case .stub:
      let stub = StubTransport(followsRedirects: true)
      let route = StubResponse.handler { request, _ in
        let components = URLComponents(url: request.url, resolvingAgainstBaseURL: false)
        let seenRequest = SeenRequest(
          path: request.url.path, query: components?.percentEncodedQuery, headers: request.headers)
        return answer(seenRequest, record(seenRequest)).stubbed
      }
      await stub.on(.any, route)
      let client = APIClient(
        baseURL: URL(string: "http://feed.test")!, transport: stub, configuration: configuration)
      return Feed(client: client, seen: seen, stop: {})
    case .socket(let transport):
      let server = try LoopbackServer { request in
        let parts = request.target.split(separator: "?", maxSplits: 1)
        let seenRequest = SeenRequest(
          path: request.path, query: parts.count == 2 ? String(parts[1]) : nil,
          headers: request.headers)
        return answer(seenRequest, record(seenRequest)).scripted
      }
      return Feed(
        client: transport.client(server.baseURL, configuration: configuration), seen: seen,
        stop: server.stop)
    }
  }
}

extension EventStreamPath {
  /// Two feeds at two origins on this path: the client's, which answers the `n`th request it
  /// sees (from 0) with `answer(request, n, other)`, where `other` is the base URL of the second
  /// origin; and the second, which answers every request with `otherAnswer`.
  func feeds(
    configuration: APIClient.Configuration,
    answer: @escaping @Sendable (SeenRequest, Int, URL) -> FeedAnswer,
    otherAnswer: FeedAnswer
  ) async throws -> (feed: Feed, other: Locked<[SeenRequest]>) {
    let other = Locked<[SeenRequest]>([])
    switch self {
    case .stub:
      let otherURL = URL(string: "http://other.test")!
      let seen = Locked<[SeenRequest]>([])
      let stub = StubTransport(followsRedirects: true)
      let route = StubResponse.handler { request, _ in
        let components = URLComponents(url: request.url, resolvingAgainstBaseURL: false)
        let seenRequest = SeenRequest(
          path: request.url.path, query: components?.percentEncodedQuery, headers: request.headers)
        guard request.url.host != otherURL.host else {
          other.withLock { $0.append(seenRequest) }
          return otherAnswer.stubbed
        }
        let index = seen.withLock { seen in
          seen.append(seenRequest)
          return seen.count - 1
        }
        return answer(seenRequest, index, otherURL).stubbed
      }
      await stub.on(.any, route)
      let client = APIClient(
        baseURL: URL(string: "http://feed.test")!, transport: stub, configuration: configuration)
      return (Feed(client: client, seen: seen, stop: {}), other)
    case .socket:
      let server = try LoopbackServer { request in
        let parts = request.target.split(separator: "?", maxSplits: 1)
        other.withLock {
          $0.append(
            SeenRequest(
              path: request.path, query: parts.count == 2 ? String(parts[1]) : nil,
              headers: request.headers))
        }
        return otherAnswer.scripted
      }
      let feed = try await feed(configuration: configuration) { request, index in
        answer(request, index, server.baseURL)
      }
      let stop = { @Sendable in
        feed.stop()
        server.stop()
      }
      return (Feed(client: feed.client, seen: feed.seen, stop: stop), other)
    }
  }
}

/// A scripted feed's client, and the requests the feed saw.
struct Feed: Sendable {
  let client: APIClient
  let seen: Locked<[SeenRequest]>
  /// Stops the feed's server, if it has one.
  let stop: @Sendable () -> Void

  /// The requests seen so far.
  var requests: [SeenRequest] { seen.withLock { $0 } }
}

/// Drives a reconnecting stream's waits on a `TestClock`: each wait `onState` announces is
/// advanced once its sleeper is there. The states told are kept, in order.
final class ReconnectDriver: Sendable {
  let clock = TestClock()
  private let told = Locked<[ConnectionState]>([])
  private let waits: AsyncStream<Duration>
  private let announce: AsyncStream<Duration>.Continuation
  private let advancing: Task<Void, Never>

  init() {
    (waits, announce) = AsyncStream.makeStream(of: Duration.self)
    advancing = Task { [clock, waits] in
      for await wait in waits {
        guard await clock.waitForSleeper(dueIn: wait) else { return }
        await clock.advance(by: wait)
      }
    }
  }

  deinit {
    announce.finish()
    advancing.cancel()
  }

  /// For `onState`.
  var onState: @Sendable (ConnectionState) -> Void {
    { [told, announce] state in
      told.withLock { $0.append(state) }
      switch state {
      case .reconnecting(let wait, _): announce.yield(wait)
      case .closed, .failed: announce.finish()
      case .connected: break
      }
    }
  }

  /// The states told so far, each as its case name.
  var states: [String] {
    told.withLock { $0 }.map { "\($0)".prefix { $0 != "(" }.description }
  }

  /// The waits announced so far.
  var announcedWaits: [Duration] {
    told.withLock { $0 }.compactMap {
      if case .reconnecting(let wait, _) = $0 { wait } else { nil }
    }
  }

  /// A client configuration on this driver's clock, with no timeout: the only sleepers are the
  /// stream's waits.
  var configuration: APIClient.Configuration {
    APIClient.Configuration(timeout: nil, clock: clock)
  }
}
