import Errand
import Foundation

/// What a ``StubTransport`` answers: a response, an error, several in turn, or a computed answer;
/// optionally after a delay.
///
/// ```swift
/// .json([Dog(name: "Rex")])                        // 200 with a JSON body
/// .status(500)                                     // a bare status (Moya's .networkResponse)
/// .status(401, body: Data("expired".utf8), headers: ["WWW-Authenticate": "Bearer"])
/// .response(HTTPResponse(status: 200, headers: ["ETag": "v1"], body: data))   // Moya's .response
/// .error(URLError(.notConnectedToInternet))        // Moya's .networkError
/// .fixture("dogs.json")                            // a file from Fixtures/
/// .sequence([.status(503), .json(dog)])            // one per call, then the last again
/// .json(dog).delayed(by: .seconds(30))             // on the stub's clock
/// ```
public struct StubResponse: Sendable {
  indirect enum Kind: Sendable {
    case response(HTTPResponse)
    case failure(any Error)
    case sequence([StubResponse])
    case handler(@Sendable (HTTPRequest, Int) async throws -> StubResponse)
    case hang
    case stream(StubStream)
    case passthrough
  }

  let kind: Kind
  /// The delay before answering, or `nil` for the stub's default.
  let delay: Duration?
  /// What the route expects beyond its answer: how often it is called, its scenario.
  var terms = RouteTerms()

  init(_ kind: Kind, delay: Duration? = nil) {
    self.kind = kind
    self.delay = delay
  }

  /// This answer, on a route that may go unused: ``StubTransport/verifyAllRoutesUsed()``,
  /// ``StubTransport/verifyExpectations()`` and the `.stubbed` test trait do not report it.
  ///
  /// ```swift
  /// await stub.on(.get, "/v1/config", .json(config).allowingUnused())
  /// ```
  /// It makes the fewest calls the route expects zero, whatever else says, and keeps the most:
  /// `.times(2).allowingUnused()` is `.atMost(2)`. See ``times(_:)``.
  /// - Returns: The answer.
  public func allowingUnused() -> StubResponse {
    var copy = self
    copy.terms.mayGoUnused = true
    return copy
  }

  /// The same answer after a delay on the stub's clock (Moya's `.delayed`).
  /// - Parameter delay: How long to wait before answering.
  /// - Returns: The delayed answer.
  public func delayed(by delay: Duration) -> StubResponse {
    var copy = StubResponse(kind, delay: delay)
    copy.terms = terms
    return copy
  }

  /// A full response, sent as given.
  /// - Parameter response: The response.
  /// - Returns: The stub response.
  public static func response(_ response: HTTPResponse) -> StubResponse {
    StubResponse(.response(response))
  }

  /// A status with an optional body and headers.
  /// - Parameters:
  ///   - code: The status code.
  ///   - body: The body bytes.
  ///   - headers: The header fields.
  /// - Returns: The stub response.
  public static func status(_ code: Int, body: Data = Data(), headers: HTTPHeaders = [:])
    -> StubResponse
  {
    .response(HTTPResponse(status: code, headers: headers, body: body))
  }

  /// A JSON body, encoded with sorted keys, and `Content-Type: application/json`.
  ///
  /// A value that cannot be encoded makes the stub throw the encoding error when it is asked.
  /// - Parameters:
  ///   - value: The value to encode.
  ///   - status: The status code.
  ///   - encoder: The encoder; one that sorts keys by default.
  /// - Returns: The stub response.
  public static func json<Value: Encodable>(
    _ value: Value, status: Int = 200, encoder: JSONEncoder? = nil
  ) -> StubResponse {
    do {
      let body = try (encoder ?? JSONEncoder.sorted()).encode(value)
      return .status(status, body: body, headers: ["Content-Type": "application/json"])
    } catch {
      return .error(error)
    }
  }

  /// A body read from a fixture file, with `Content-Type: application/json` for `.json` files.
  ///
  /// A missing file makes the stub throw the ``FixtureError`` (with the path tried) when asked.
  /// - Parameters:
  ///   - name: The file name inside the folder, such as `dogs.json`.
  ///   - status: The status code.
  ///   - headers: More header fields.
  ///   - fixtures: Where to look; the `Fixtures/` folder above the calling file by default.
  ///   - filePath: The calling file, used to find `Fixtures/`.
  /// - Returns: The stub response.
  public static func fixture(
    _ name: String, status: Int = 200, headers: HTTPHeaders = [:], from fixtures: Fixtures? = nil,
    filePath: String = #filePath
  ) -> StubResponse {
    do {
      let body = try (fixtures ?? Fixtures.nearest(to: filePath)).data(name)
      var allHeaders: HTTPHeaders =
        name.hasSuffix(".json") ? ["Content-Type": "application/json"] : [:]
      allHeaders.merge(headers)
      return .status(status, body: body, headers: allHeaders)
    } catch {
      return .error(error)
    }
  }

  /// A body read from a resource in a bundle.
  /// - Parameters:
  ///   - name: The resource name with its extension, such as `dogs.json`.
  ///   - bundle: The bundle that holds it.
  ///   - status: The status code.
  ///   - headers: More header fields.
  /// - Returns: The stub response.
  public static func fixture(
    _ name: String, in bundle: Bundle, status: Int = 200, headers: HTTPHeaders = [:]
  ) -> StubResponse {
    let directory = bundle.resourceURL ?? bundle.bundleURL
    return .fixture(name, status: status, headers: headers, from: Fixtures(directory: directory))
  }

  /// An error for the transport to throw, such as `URLError(.notConnectedToInternet)`.
  /// - Parameter error: The error.
  /// - Returns: The stub response.
  public static func error(_ error: any Error) -> StubResponse {
    StubResponse(.failure(error))
  }

  /// One answer per call, in order; once they run out, the last answers every further call.
  /// - Parameter responses: The answers, at least one.
  /// - Returns: The stub response.
  public static func sequence(_ responses: [StubResponse]) -> StubResponse {
    StubResponse(.sequence(responses))
  }

  /// An answer computed from the request and the number of this route's call (1 for the first).
  /// - Parameter handler: Produces the answer.
  /// - Returns: The stub response.
  public static func handler(
    _ handler:
      @escaping @Sendable (_ request: HTTPRequest, _ call: Int) async throws -> StubResponse
  ) -> StubResponse {
    StubResponse(.handler(handler))
  }
}
