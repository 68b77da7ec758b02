// The other process of the stub-server tests: an app in miniature, as a UI test would launch it.
// It finds the stub server in its environment as an app does (StubServerEnvironment), makes the
// calls the test lists through APIClient over the transport the test names, and prints one line
// of JSON per call for the test to read back.
//
// Environment:
//   ERRAND_STUB_SERVER_URL  the server (LoopbackServer.launchEnvironment)
//   ERRAND_CHILD_API        the API's production base URL (https://api.example.com/v1 if unset)
//   ERRAND_CHILD_TRANSPORT  urlSession (the default) or curl (Linux)
//   ERRAND_CHILD_CALLS      a JSON array of {method, path, query?, headers?, body?, timeout?}
// Exit status: 0 once every call is made, 2 for calls it cannot read, 3 without a stub server.
import Errand
import ErrandStubs
import Foundation

#if os(Linux)
  import ErrandCurl
#endif

/// One call the test asks for.
struct Call: Codable {
  var method: String
  var path: String
  var query: [String: String]?
  var headers: [String: String]?
  var body: String?
  /// Seconds.
  var timeout: Double?
}

/// What one call got: the status and body of an answer (acceptable or not), or the kind of the
/// error and the `URLError` code underneath.
struct Outcome: Codable {
  var call: Int
  var status: Int?
  var body: String?
  var error: String?
  var urlError: Int?
}

let environment = ProcessInfo.processInfo.environment
let production =
  environment["ERRAND_CHILD_API"].flatMap(URL.init(string:))
  ?? URL(fileURLWithPath: "/")
guard let base = StubServerEnvironment.baseURL(in: environment, replacing: production) else {
  print("NO-STUB-SERVER \(environment[StubServerEnvironment.key] ?? "(not set)")")
  exit(3)
}
let transport: any Transport
#if os(Linux)
  transport =
    environment["ERRAND_CHILD_TRANSPORT"] == "curl" ? CurlTransport() : URLSessionTransport()
#else
  transport = URLSessionTransport()
#endif
let client = APIClient(baseURL: base, transport: transport)
guard
  let calls = try? JSONDecoder().decode(
    [Call].self, from: Data((environment["ERRAND_CHILD_CALLS"] ?? "[]").utf8))
else {
  print("UNREADABLE-CALLS")
  exit(2)
}
print("BASE \(base.absoluteString)")
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
    outcome.error = error.kind.rawValue
    outcome.status = error.response?.status
    outcome.body = error.response.map { String(decoding: $0.body, as: UTF8.self) }
    outcome.urlError = error.urlError?.code.rawValue
  } catch {
    outcome.error = "\(error)"
  }
  let line = (try? JSONEncoder().encode(outcome)).map { String(decoding: $0, as: UTF8.self) }
  print("OUTCOME \(line ?? "{}")")
}
