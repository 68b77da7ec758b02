import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// Random but reproducible requests (paths, query items, headers, methods, bodies, JSON shapes)
/// through request building, every printer and the cassette writer and reader: nothing crashes,
/// no secret prints, and every URL Errand builds reads back as the path and query it was given.
/// Small by default; full size with `ERRAND_FULL_SIZE=1` (``TestSize``).
@Suite(.timeLimit(.minutes(5))) struct FuzzTests {
  /// SplitMix64: a few lines, no dependency, the same sequence for the same seed everywhere.
  static let pieces = [
    "a", "Z", "9", " ", "%", "%2F", "?", "#", "&", "=", "+", "/", ";", ",", "é", "🐕", "\u{0}",
    "\r", "\n", "\t", "..", ".", "~", "'", "\"", "<", ">", "\\", "[", "]", "@", ":", "token",
    "password", "",
  ]

  static func text(_ random: inout SeededGenerator, maximum: Int = 8) -> String {
    (0..<Int.random(in: 0...maximum, using: &random)).map { _ in
      pieces.randomElement(using: &random)!
    }.joined()
  }

  static func json(_ random: inout SeededGenerator, depth: Int, secret: String) -> Any {
    switch depth > 5 ? 0 : Int.random(in: 0...5, using: &random) {
    case 0: return text(&random)
    case 1: return Int.random(in: -1_000...1_000, using: &random)
    case 2:
      return (0..<Int.random(in: 0...3, using: &random)).map { _ in
        json(&random, depth: depth + 1, secret: secret)
      }
    default:
      var object: [String: Any] = [:]
      for _ in 0..<Int.random(in: 0...3, using: &random) {
        object[text(&random, maximum: 3)] = json(&random, depth: depth + 1, secret: secret)
      }
      if Bool.random(using: &random) { object["password"] = secret }
      return object
    }
  }

  static func endpoint(_ random: inout SeededGenerator, secret: String) -> Endpoint<Data> {
    let methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "QUERY", "G T", "GET\r\nX: 1", ""]
    var query = (0..<Int.random(in: 0...4, using: &random)).map { _ in
      URLQueryItem(
        name: text(&random, maximum: 3), value: Bool.random(using: &random) ? text(&random) : nil)
    }
    query.append(URLQueryItem(name: "token", value: secret))
    var headers: HTTPHeaders = ["Authorization": "Bearer \(secret)", "X-API-Key": secret]
    let names = ["Accept", "X-Trace", "X-Note", "Cookie", "Token", "X-Secret"]
    for _ in 0..<Int.random(in: 0...3, using: &random) {
      // Mostly valid names, so that most requests get built and printed; some are not.
      let name =
        Int.random(in: 0..<4, using: &random) == 0
        ? text(&random, maximum: 3) : names.randomElement(using: &random)!
      headers.add(name, text(&random))
    }
    let body: RequestBody?
    switch Int.random(in: 0...3, using: &random) {
    case 0: body = nil
    case 1:
      let object =
        ["password": secret, "shape": json(&random, depth: 0, secret: secret)] as [String: Any]
      let data = (try? JSONSerialization.data(withJSONObject: object)) ?? Data()
      body = .data(data, contentType: "application/json")
    case 2:
      body = .form([("user", text(&random)), ("password", secret), (text(&random), text(&random))])
    default:
      body = .data(
        Data(
          (0..<Int.random(in: 0...64, using: &random)).map { _ in
            UInt8.random(in: 0...255, using: &random)
          }))
    }
    return Endpoint<Data>(
      method: HTTPMethod(rawValue: methods.randomElement(using: &random)!),
      path: (0..<Int.random(in: 0...4, using: &random)).map { _ in text(&random, maximum: 4) }
        .joined(separator: "/"),
      query: query, headers: headers, body: body, decoding: .data)
  }

  static func dumped(_ value: Any) -> String {
    var text = ""
    dump(value, to: &text)
    return text
  }

  @Test(arguments: [UInt64(1), 2, 3, 4, 5])
  func randomRequestsNeitherCrashNorLeakAndReadBack(seed: UInt64) async throws {
    var random = SeededGenerator(seed: seed)
    let client = makeClient()
    var accepted = 0
    var refused = 0
    let iterations = TestSize.count(small: 100, full: 1_000)
    for iteration in 0..<iterations {
      // CPU-bound: let the suites that wait for events have a thread now and then.
      await Task.yield()
      let secret = "Zq\(seed)x\(iteration)Secret"
      let endpoint = Self.endpoint(&random, secret: secret)
      let request: HTTPRequest
      do {
        request = try client.makeRequest(for: endpoint)
        accepted += 1
      } catch let error as APIError {
        refused += 1
        #expect(error.kind == .invalidRequest)
        #expect(!error.localizedDescription.contains(secret), "\(error.localizedDescription)")
        continue
      }
      // The URL reads back as the path and query it was given.
      let components = try #require(URLComponents(url: request.url, resolvingAgainstBaseURL: false))
      var relative = Substring(endpoint.path)
      while relative.first == "/" { relative = relative.dropFirst() }
      #expect(components.path == (relative.isEmpty ? "/v1" : "/v1/" + relative), "\(endpoint.path)")
      let sent = endpoint.query.filter { !($0.name.isEmpty && $0.value == nil) }
      #expect((components.queryItems ?? []) == sent, "\(endpoint.query)")

      let response = HTTPResponse(
        status: 500, headers: ["Content-Type": request.headers["Content-Type"] ?? "text/plain"],
        body: request.body ?? Data(), url: request.url, request: request)
      let printed = [
        request.description, request.cURLDescription, Self.dumped(request), Self.dumped(response),
        APIError.unacceptableStatus(response).localizedDescription,
        UnmatchedRequest(request: request, closestRoutes: []).description,
      ]
      for text in printed {
        #expect(!text.contains(secret), "\(secret) printed:\n\(text)")
      }
    }
    // About a third of the requests are valid: both kinds are well represented.
    #expect(accepted > iterations / 5)
    #expect(refused > iterations / 5)
    print(
      "fuzz seed \(seed): \(iterations) requests, \(accepted) accepted, \(refused) refused as invalid"
    )
  }

  @Test(arguments: [UInt64(7), 8])
  func randomExchangesRecordAndReplayWithoutSecrets(seed: UInt64) async throws {
    var random = SeededGenerator(seed: seed)
    let file = FileManager.default.temporaryDirectory
      .appendingPathComponent("errand-fuzz-\(UUID().uuidString)").appendingPathComponent("c.json")
    defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
    // The upstream echoes what it received, secrets included.
    let upstream = StubTransport { request in
      .status(
        200, body: Data(request.headers.description.utf8) + (request.body ?? Data()),
        headers: ["Content-Type": request.headers["Content-Type"] ?? "text/plain"])
    }
    let recorder = APIClient(
      baseURL: base, transport: CassetteTransport(url: file, mode: .all, upstream: upstream))
    var secrets: [String] = []
    var sent: [Endpoint<Data>] = []
    for iteration in 0..<TestSize.count(small: 60, full: 200) {
      await Task.yield()
      let secret = "Zq\(seed)x\(iteration)Secret"
      let endpoint = Self.endpoint(&random, secret: secret)
      guard (try? recorder.makeRequest(for: endpoint)) != nil else { continue }
      _ = try await recorder.send(endpoint)
      secrets.append(secret)
      sent.append(endpoint)
    }
    let text = try String(contentsOf: file, encoding: .utf8)
    for secret in secrets {
      #expect(!text.contains(secret), "\(secret) reached the cassette")
    }
    // Every recorded exchange loads back and answers its request.
    let player = APIClient(
      baseURL: base, transport: CassetteTransport(url: file, mode: .none, allowsRepeats: true))
    for endpoint in sent {
      _ = try await player.send(endpoint)
    }
    // About a third of the endpoints form a request.
    #expect(sent.count > TestSize.count(small: 10, full: 50))
    print("fuzz cassette seed \(seed): \(sent.count) exchanges recorded and replayed")
  }
}
