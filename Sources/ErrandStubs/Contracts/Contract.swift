import Errand
import Foundation

/// A table of endpoint calls and what the API answers: the single source of truth for stubs that
/// app tests use and for checks that the real API still agrees.
///
/// ```swift
/// let dogsAPI = Contract("Dogs API", [
///   .returns("list dogs", Endpoint<[Dog]>(path: "dogs"), [Dog(name: "Rex")]),
///   .status("unknown dog", Endpoint<Dog>(path: "dogs/999"), 404),
///   .fails("broken JSON", Endpoint<Dog>(path: "dogs/bad"), with: .decoding),
/// ])
/// let client = APIClient(baseURL: base, transport: dogsAPI.stub(baseURL: base))   // for app tests
///
/// @Test(arguments: dogsAPI.cases)                                                  // against the API
/// func apiHonoursTheContract(_ row: ContractCase) async throws {
///   try await row.verify(against: URLSessionTransport(), baseURL: base)
/// }
/// ```
public struct Contract: Sendable {
  /// The contract's name.
  public var name: String
  /// The rows, in order.
  public var cases: [ContractCase]

  /// Create a contract.
  /// - Parameters:
  ///   - name: The contract's name.
  ///   - cases: The rows.
  public init(_ name: String, _ cases: [ContractCase]) {
    self.name = name
    self.cases = cases
  }

  /// A stub that answers every case as the contract says, matching each on method, path, query
  /// and the endpoint's own headers, in the contract's order (put the more specific of two cases
  /// for one path first); anything else is unmatched. Each route is registered at the line that
  /// calls this, so a count a case's answer breaks (`.json(dogs).times(1)`) is reported there.
  /// - Parameters:
  ///   - baseURL: The base URL the app's client uses.
  ///   - fileID: Where the stub is made; filled in by the compiler.
  ///   - filePath: Where the stub is made; filled in by the compiler.
  ///   - line: Where the stub is made; filled in by the compiler.
  ///   - column: Where the stub is made; filled in by the compiler.
  /// - Returns: The stub.
  public func stub(
    baseURL: URL, fileID: String = #fileID, filePath: String = #filePath, line: Int = #line,
    column: Int = #column
  ) -> StubTransport {
    makeStub(
      baseURL: baseURL,
      site: CallSite(fileID: fileID, filePath: filePath, line: line, column: column))
  }

  /// A stub that answers every case as the contract says; see
  /// ``stub(baseURL:fileID:filePath:line:column:)``, which `stub(baseURL: base)` calls. This
  /// one, reached only as a function value (`contract.stub(baseURL:)`), cannot know its
  /// caller's line: its routes are registered here.
  /// - Parameter baseURL: The base URL the app's client uses.
  /// - Returns: The stub.
  @_disfavoredOverload
  public func stub(baseURL: URL) -> StubTransport {
    makeStub(
      baseURL: baseURL,
      site: CallSite(fileID: #fileID, filePath: #filePath, line: #line, column: #column))
  }

  private func makeStub(baseURL: URL, site: CallSite) -> StubTransport {
    let builder = APIClient(baseURL: baseURL, transport: StubTransport())
    var routes = StubRoutes()
    for row in cases {
      guard let request = try? row.makeRequest(builder) else { continue }
      let query = URLComponents(url: request.url, resolvingAgainstBaseURL: true)?.queryItems ?? []
      let byQuery = query.reduce(
        RequestMatcher.method(request.method) && .samePath(as: request.url)
      ) {
        $0 && .query($1.name, $1.value)
      }
      let matcher = row.endpointHeaders.reduce(byQuery) { $0 && .header($1.name, $1.value) }
      routes.on(
        matcher, row.answer, fileID: site.fileID, filePath: site.filePath, line: site.line,
        column: site.column)
    }
    return .stub { $0 = routes }
  }

  /// Check every case against a transport.
  /// - Parameters:
  ///   - transport: The transport to check.
  ///   - baseURL: The API's base URL.
  /// - Returns: The cases the transport no longer honours; empty when it honours them all.
  public func violations(against transport: any Transport, baseURL: URL) async
    -> [ContractViolation]
  {
    var found: [ContractViolation] = []
    for row in cases {
      do {
        try await row.verify(against: transport, baseURL: baseURL)
      } catch {
        found.append(error)
      }
    }
    return found
  }
}
