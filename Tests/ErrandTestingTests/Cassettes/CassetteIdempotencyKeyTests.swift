import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// A call with a generated `Idempotency-Key` sends a new key every run, so the key a cassette
/// recorded never comes again: replaying must not depend on its value, only on its presence.
@Suite(.timeLimit(.minutes(3))) struct CassetteIdempotencyKeyTests {
  static let order = Endpoint<Data>(
    method: .post, path: "orders", body: .data(Data(#"{"sku":"A1"}"#.utf8)), decoding: .data
  ).withIdempotencyKey()

  static func client(_ transport: any Transport, redaction: Redaction) -> APIClient {
    var configuration = APIClient.Configuration(timeout: nil)
    configuration.redaction = redaction
    return APIClient(baseURL: base, transport: transport, configuration: configuration)
  }

  /// The redaction of an app that keeps the key out of its files, and the default one.
  static let hidden: Redaction = {
    var redaction = Redaction.default
    redaction.headers.insert("Idempotency-Key")
    return redaction
  }()

  @Test(
    arguments: [
      (
        "key recorded, headers matched", Redaction.default,
        CassetteTransport.Matching.default.union(.headers)
      ),
      ("key recorded, default matching", .default, .default),
      ("key hidden, headers matched", hidden, CassetteTransport.Matching.default.union(.headers)),
    ] as [(String, Redaction, CassetteTransport.Matching)])
  func aLaterRunWithANewKeyReplays(
    label: String, redaction: Redaction, matching: CassetteTransport.Matching
  ) async throws {
    let file = temporaryCassette()
    let upstream = StubTransport()
    await upstream.on(.post, "/v1/orders", .status(201, body: Data(#"{"id":7}"#.utf8)))
    let recorder = CassetteTransport(
      url: file, mode: .once, upstream: upstream, matching: matching, redaction: redaction)
    let recorded = try await Self.client(recorder, redaction: redaction).response(for: Self.order)
    let firstKey = try #require(recorded.request.headers["Idempotency-Key"])
    let text = try String(contentsOf: file, encoding: .utf8)
    #expect(text.contains("Idempotency-Key"), "\(label)")
    #expect(
      text.contains(firstKey.replacingOccurrences(of: "\"", with: #"\""#))
        == (redaction == .default), "\(label)")

    let player = CassetteTransport(
      url: file, mode: .none, matching: matching, redaction: redaction)
    let replayed = try await Self.client(player, redaction: redaction).response(for: Self.order)
    #expect(replayed.value == Data(#"{"id":7}"#.utf8), "\(label)")
    #expect(replayed.request.headers["Idempotency-Key"] != firstKey, "\(label)")
    #expect(await upstream.requests.count == 1, "\(label)")
  }

  /// Matching on headers still asks for the field: a call without a key is another request.
  @Test func aRequestWithoutTheKeyIsNotTheRecordedOne() async throws {
    let file = temporaryCassette()
    let upstream = StubTransport()
    await upstream.on(.post, "/v1/orders", .status(201))
    let matching = CassetteTransport.Matching.default.union(.headers)
    let recorder = CassetteTransport(url: file, mode: .once, upstream: upstream, matching: matching)
    _ = try await Self.client(recorder, redaction: .default).send(Self.order)
    var plain = Self.order
    plain.idempotencyKey = nil
    let player = CassetteTransport(url: file, mode: .none, matching: matching)
    let error = await #expect(throws: APIError.self) {
      try await Self.client(player, redaction: .default).send(plain)
    }
    guard case .noMatch = error?.underlyingError as? CassetteError else {
      Issue.record("expected noMatch, got \(String(describing: error))")
      return
    }
  }
}
