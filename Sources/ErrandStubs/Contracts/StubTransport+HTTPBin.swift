import Errand
import Foundation

extension StubTransport {
  /// A stub that answers a subset of httpbin without a network: `/status/{code}`, `/headers`,
  /// `/get`, `/anything`, `/bearer`, `/range/{n}` and `/delay/{n}`; requests to port 9 are refused.
  /// It runs ``TransportConformance`` and httpbin contracts offline.
  /// - Parameter clock: The clock `/delay` waits on.
  /// - Returns: The stub.
  public static func httpbin(clock: any Clock<Duration> = ContinuousClock()) -> StubTransport {
    StubTransport(clock: clock) { request in HTTPBinEmulation.answer(request) }
  }
}

/// httpbin's answers, for ``StubTransport/httpbin(clock:)``.
enum HTTPBinEmulation {
  static func answer(_ request: HTTPRequest) -> StubResponse {
    if request.url.port == 9 {
      return .connectionRefused
    }
    let parts = request.url.path.split(separator: "/").map(String.init)
    switch (parts.first, parts.count > 1 ? Int(parts[1]) : nil) {
    case ("status", let code?):
      return .status(code)
    case ("range", let count?) where (1...102_400).contains(count):
      let alphabet = Array("abcdefghijklmnopqrstuvwxyz".utf8)
      return .status(
        200, body: Data((0..<count).map { alphabet[$0 % 26] }),
        headers: ["Content-Type": "application/octet-stream"])
    case ("stream", let count?):
      let lines = (0..<min(count, 100)).map { index in
        let line = ["id": index, "url": request.url.absoluteString] as [String: Any]
        let data = (try? JSONSerialization.data(withJSONObject: line, options: [.sortedKeys]))
        return (data ?? Data()) + Data("\n".utf8)
      }
      return .chunks(lines, headers: ["Content-Type": "application/json"])
    case ("stream-bytes", let count?):
      let size = max(1, Int(query(request, "chunk_size") ?? "") ?? 10 * 1024)
      let bytes = Data((0..<min(count, 100 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
      let chunks = stride(from: 0, to: bytes.count, by: size).map {
        bytes[$0..<min($0 + size, bytes.count)]
      }
      return .chunks(chunks, headers: ["Content-Type": "application/octet-stream"])
    case ("drip", nil):
      let count = max(0, min(Int(query(request, "numbytes") ?? "") ?? 10, 1000))
      let duration = max(0, Double(query(request, "duration") ?? "") ?? 2)
      let interval = count > 1 ? Duration.seconds(duration / Double(count)) : .zero
      return .chunks(
        Array(repeating: Data("*".utf8), count: count), interval: interval,
        headers: ["Content-Type": "application/octet-stream"])
    case ("delay", let seconds?):
      return json(echo(request)).delayed(by: .seconds(min(seconds, 10)))
    case ("headers", nil):
      return json(["headers": headers(request)])
    case ("get", nil), ("anything", _):
      return json(echo(request))
    case ("bearer", nil):
      guard let value = request.headers["Authorization"], value.hasPrefix("Bearer ") else {
        return .status(401, headers: ["WWW-Authenticate": "Bearer"])
      }
      return json(["authenticated": true, "token": String(value.dropFirst("Bearer ".count))])
    default:
      return .status(404)
    }
  }

  private static func query(_ request: HTTPRequest, _ name: String) -> String? {
    URLComponents(url: request.url, resolvingAgainstBaseURL: true)?.queryItems?
      .first { $0.name == name }?.value
  }

  private static func headers(_ request: HTTPRequest) -> [String: String] {
    var result: [String: String] = [:]
    for field in request.headers {
      result[field.name] = result[field.name].map { "\($0),\(field.value)" } ?? field.value
    }
    return result
  }

  private static func echo(_ request: HTTPRequest) -> [String: Any] {
    let items = URLComponents(url: request.url, resolvingAgainstBaseURL: true)?.queryItems ?? []
    return [
      "args": Dictionary(
        items.map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { first, _ in first }),
      "data": request.body.flatMap { String(data: $0, encoding: .utf8) } ?? "",
      "headers": headers(request), "method": request.method.rawValue,
      "url": request.url.absoluteString,
    ]
  }

  private static func json(_ object: [String: Any]) -> StubResponse {
    let body =
      (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
    return .status(200, body: body, headers: ["Content-Type": "application/json"])
  }
}
