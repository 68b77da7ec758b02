import Errand
import Foundation

/// One row of a ``Contract``: an endpoint call and what the API answers.
///
/// ```swift
/// .returns("list dogs", Endpoint<[Dog]>(path: "dogs"), [Dog(name: "Rex")])
/// .status("unknown dog", Endpoint<Dog>(path: "dogs/999"), 404)
/// .fails("offline", Endpoint<Dog>(path: "dogs/1"), with: .transport)
/// ```
public struct ContractCase: Sendable, CustomStringConvertible {
  /// The kinds of failure a case can expect: `APIError.Kind`, under the name contracts used
  /// first.
  public typealias Failure = APIError.Kind

  /// The name shown in test reports, for example `list dogs`.
  public let name: String
  /// What the case expects, in words: `returns [{"name":"Rex"}]`, `status 404`, `fails with transport`.
  public let expectation: String
  let makeRequest: @Sendable (APIClient) throws -> HTTPRequest
  /// The headers the endpoint itself sets, which a stub route also requires.
  let endpointHeaders: HTTPHeaders
  let answer: StubResponse
  let check: @Sendable (APIClient) async -> ContractViolation.Difference?

  /// `<name>: <expectation>`.
  public var description: String { "\(name): \(expectation)" }

  /// The endpoint decodes to `value`. Stubs answer with `value` encoded as JSON, or `answer`.
  /// - Parameters:
  ///   - name: The name shown in test reports.
  ///   - endpoint: The call.
  ///   - value: The decoded value the API must give.
  ///   - answer: What a stub answers, when not `value` as JSON (an envelope, say).
  /// - Returns: The case.
  public static func returns<Value: Equatable & Encodable & Sendable>(
    _ name: String, _ endpoint: Endpoint<Value>, _ value: Value, answer: StubResponse? = nil
  ) -> ContractCase {
    ContractCase(
      name: name, expectation: "returns \(Rendering.json(value))",
      makeRequest: { try $0.makeRequest(for: endpoint) }, endpointHeaders: endpoint.headers,
      answer: answer ?? .json(value),
      check: { client in
        do {
          let actual = try await client.send(endpoint)
          return actual == value
            ? nil
            : .init(expected: Rendering.prettyJSON(value), actual: Rendering.prettyJSON(actual))
        } catch {
          return .init(
            expected: "the value\n" + Rendering.prettyJSON(value),
            actual: Rendering.outcome(of: error))
        }
      })
  }

  /// The API answers this status (and, when given, exactly this body), whatever the endpoint
  /// accepts.
  /// - Parameters:
  ///   - name: The name shown in test reports.
  ///   - endpoint: The call.
  ///   - status: The status the API must answer.
  ///   - body: The body it must answer, or `nil` for any.
  /// - Returns: The case.
  public static func status<Value>(
    _ name: String, _ endpoint: Endpoint<Value>, _ status: Int, body: Data? = nil
  )
    -> ContractCase
  {
    let raw = rawEndpoint(endpoint)
    let expected = "status \(status)" + (body.map { "\nbody \(Rendering.text($0))" } ?? "")
    return ContractCase(
      name: name, expectation: "status \(status)", makeRequest: { try $0.makeRequest(for: raw) },
      endpointHeaders: endpoint.headers,
      answer: .status(status, body: body ?? Data()),
      check: { client in
        do {
          let response = try await client.response(for: raw).response
          let actual =
            "status \(response.status)"
            + (body == nil ? "" : "\nbody \(Rendering.text(response.body))")
          return actual == expected ? nil : .init(expected: expected, actual: actual)
        } catch {
          return .init(expected: expected, actual: Rendering.outcome(of: error))
        }
      })
  }

  /// The API answers this status with this error body, in the app's own error model: stubs answer
  /// with it as JSON, and the check decodes the real answer's body as the same type.
  ///
  /// ```swift
  /// .status("unknown dog", Endpoint<Dog>(path: "dogs/999"), 404, failure: Problem(title: "No such dog"))
  /// ```
  /// - Parameters:
  ///   - name: The name shown in test reports.
  ///   - endpoint: The call.
  ///   - status: The status the API must answer.
  ///   - failure: The error body it must answer.
  /// - Returns: The case.
  public static func status<Value, Failure: Codable & Equatable & Sendable>(
    _ name: String, _ endpoint: Endpoint<Value>, _ status: Int, failure: Failure
  ) -> ContractCase {
    let raw = rawEndpoint(endpoint)
    let expected = "status \(status)\nfailure \(Rendering.json(failure))"
    return ContractCase(
      name: name, expectation: expected, makeRequest: { try $0.makeRequest(for: raw) },
      endpointHeaders: endpoint.headers,
      answer: .json(failure, status: status),
      check: { client in
        do {
          let response = try await client.response(for: raw).response
          let decoded = try? client.configuration.decoder.decode(Failure.self, from: response.body)
          let actual =
            "status \(response.status)\nfailure "
            + (decoded.map { Rendering.json($0) } ?? Rendering.text(response.body))
          return actual == expected ? nil : .init(expected: expected, actual: actual)
        } catch {
          return .init(expected: expected, actual: Rendering.outcome(of: error))
        }
      })
  }

  /// The call fails with this kind of `APIError`. Stubs answer with a response that produces it.
  /// - Parameters:
  ///   - name: The name shown in test reports.
  ///   - endpoint: The call.
  ///   - failure: The kind of error.
  /// - Returns: The case.
  public static func fails<Value>(
    _ name: String, _ endpoint: Endpoint<Value>, with failure: Failure
  )
    -> ContractCase
  {
    let answer: StubResponse
    switch failure {
    case .transport: answer = .connectionLost
    case .timedOut: answer = .timedOut
    case .decoding: answer = .invalidJSON
    case .unacceptableStatus: answer = .status(500)
    case .cancelled: answer = .error(CancellationError())
    case .invalidRequest: answer = .status(200)
    }
    return ContractCase(
      name: name, expectation: "fails with \(failure.rawValue)",
      makeRequest: { try $0.makeRequest(for: endpoint) }, endpointHeaders: endpoint.headers,
      answer: answer,
      check: { client in
        let expected = "fails with \(failure.rawValue)"
        do {
          let value = try await client.send(endpoint)
          return .init(expected: expected, actual: "succeeded with \(value)")
        } catch let error as APIError where error.kind == failure {
          return nil
        } catch {
          return .init(expected: expected, actual: Rendering.outcome(of: error))
        }
      })
  }

  /// Run the case with a client and throw ``ContractViolation`` when the answer differs.
  /// - Parameter client: The client whose transport is checked.
  /// - Throws: ``ContractViolation`` naming the case and the difference.
  public func verify(with client: APIClient) async throws(ContractViolation) {
    if let difference = await check(client) {
      throw ContractViolation(caseName: name, difference: difference)
    }
  }

  /// Run the case against a transport at a base URL.
  /// - Parameters:
  ///   - transport: The transport to check: a live server's, a cassette, a stub.
  ///   - baseURL: The API's base URL.
  /// - Throws: ``ContractViolation`` naming the case and the difference.
  public func verify(against transport: any Transport, baseURL: URL) async throws(ContractViolation)
  {
    try await verify(with: APIClient(baseURL: baseURL, transport: transport))
  }

  /// The same call, reading any status and the body as raw bytes, so a check sees what the API
  /// answered rather than how the endpoint would decode it.
  private static func rawEndpoint<Value>(_ endpoint: Endpoint<Value>) -> Endpoint<Data> {
    Endpoint<Data>(
      method: endpoint.method, path: endpoint.path, query: endpoint.query,
      headers: endpoint.headers,
      body: endpoint.body, requiresAuthentication: endpoint.requiresAuthentication,
      timeout: endpoint.timeout,
      decoding: .data, acceptableStatusCodes: 0..<1000)
  }
}
