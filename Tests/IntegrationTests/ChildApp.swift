import Errand
import ErrandTesting
import Foundation
import LoopbackServer
import TestSupport

/// The app of the stub-server tests: the `StubServerChild` executable run as another process
/// (Linux), or the same calls made in this process through a transport, with the same outcomes
/// (`Tests/StubServerChild/main.swift` is the other half; the two must read alike).
enum ChildApp {
  /// One call, as the child reads it.
  struct Call: Codable, Sendable {
    var method = "GET"
    var path: String
    var query: [String: String]?
    var headers: [String: String]?
    var body: String?
    /// Seconds.
    var timeout: Double?
  }

  /// What one call got, as the child prints it.
  struct Outcome: Codable, Sendable, Equatable, CustomStringConvertible {
    var call: Int
    var status: Int?
    var body: String?
    var error: String?
    var urlError: Int?

    var description: String {
      "#\(call) \(status.map(String.init) ?? "-") \(error ?? "ok") \(body ?? "")"
    }
  }

  /// The production base URL the tests' routes are written for.
  static let api = url("https://api.example.com/v1")

  /// Make `calls` in this process through `transport`, as the child makes them.
  static func inProcess(_ calls: [Call], through transport: any Transport, base: URL = api)
    async -> [Outcome]
  {
    let client = APIClient(baseURL: base, transport: transport)
    var outcomes: [Outcome] = []
    for (index, call) in calls.enumerated() {
      let endpoint = Endpoint<Data>(
        method: HTTPMethod(rawValue: call.method), path: call.path,
        query: (call.query ?? [:]).sorted { $0.key < $1.key }.map {
          URLQueryItem(name: $0.key, value: $0.value)
        },
        headers: HTTPHeaders(
          (call.headers ?? [:]).sorted { $0.key < $1.key }.map {
            HTTPHeaders.Field(name: $0.key, value: $0.value)
          }),
        body: call.body.map { .data(Data($0.utf8), contentType: "application/json") },
        timeout: call.timeout.map { .milliseconds(Int($0 * 1000)) })
      var outcome = Outcome(call: index)
      do {
        let response = try await client.response(for: endpoint)
        outcome.status = response.response.status
        outcome.body = String(decoding: response.value, as: UTF8.self)
      } catch let error as APIError {
        if let unmatched = error.underlyingError as? UnmatchedRequest {
          // What the stub server sends back with its 501.
          outcome.error = "unmatched"
          outcome.body = unmatched.description
          outcomes.append(outcome)
          continue
        }
        outcome.error = error.kind.rawValue
        outcome.status = error.response?.status
        outcome.body = error.response.map { String(decoding: $0.body, as: UTF8.self) }
        outcome.urlError = error.urlError?.code.rawValue
      } catch {
        outcome.error = "\(error)"
      }
      outcomes.append(outcome)
    }
    return outcomes
  }

  #if os(Linux)
    /// What a run of the child did.
    struct Run: Sendable {
      var status: Int32
      var output: String
      /// The base URL the child found in its environment.
      var base: String?
      var outcomes: [Outcome]
    }

    /// Run the child with `calls`, the server's launch environment (or `environment` in its
    /// place) and a transport of `kind`.
    static func run(
      _ calls: [Call], launchEnvironment: [String: String], transport kind: TransportKind,
      api: URL = api
    ) async throws -> Run {
      var environment = launchEnvironment
      for name in ["PATH", "HOME", "LD_LIBRARY_PATH"] {
        environment[name] = ProcessInfo.processInfo.environment[name]
      }
      environment["ERRAND_CHILD_API"] = api.absoluteString
      environment["ERRAND_CHILD_TRANSPORT"] = kind.rawValue
      environment["ERRAND_CHILD_CALLS"] = String(
        decoding: try JSONEncoder().encode(calls), as: UTF8.self)
      let (status, output) = try await ChildTestProcess.run(
        ChildTestProcess.sibling("StubServerChild"), arguments: [], environment: environment)
      let lines = output.split(separator: "\n").map(String.init)
      let outcomes = lines.filter { $0.hasPrefix("OUTCOME ") }.compactMap {
        try? JSONDecoder().decode(Outcome.self, from: Data($0.dropFirst(8).utf8))
      }
      let base = lines.first { $0.hasPrefix("BASE ") }.map { String($0.dropFirst(5)) }
      return Run(status: status, output: output, base: base, outcomes: outcomes)
    }
  #endif
}
