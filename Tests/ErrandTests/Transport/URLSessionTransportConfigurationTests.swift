import Foundation
import Testing

@testable import Errand

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// What `URLSessionTransport` changes in, or refuses of, the session it is given.
@Suite(.timeLimit(.minutes(3))) struct URLSessionTransportConfigurationTests {
  /// URLSession's own cache is off in every session Errand builds from a caller's configuration:
  /// it would be a second cache, on disk, beside `CachingMiddleware`.
  @Test func aCallersConfigurationRunsWithoutURLCache() {
    let configuration = URLSessionConfiguration.default
    configuration.urlCache = .shared
    configuration.requestCachePolicy = .returnCacheDataElseLoad
    let transport = URLSessionTransport(configuration: configuration)
    #expect(transport.session.configuration.urlCache == nil)
    #expect(transport.session.configuration.requestCachePolicy == .reloadIgnoringLocalCacheData)
    // The caller's own configuration is left as it was.
    #expect(configuration.urlCache != nil)
  }

  #if !canImport(FoundationNetworking)
    /// A background session is refused, call by call, with an error that says why and what to
    /// use instead; nothing is sent. (FoundationNetworking has no background sessions.)
    @Test(arguments: [false, true])
    func aBackgroundSessionIsRefused(ownSession: Bool) async throws {
      let configuration = URLSessionConfiguration.background(withIdentifier: "com.example.sync")
      let transport =
        ownSession
        ? URLSessionTransport(session: URLSession(configuration: configuration))
        : URLSessionTransport(configuration: configuration)
      let request = HTTPRequest(method: .get, url: URL(string: "http://127.0.0.1:9/never")!)
      let error = await #expect(throws: APIError.self) { _ = try await transport.send(request) }
      guard case .invalidRequest(let reason) = error else {
        Issue.record("expected an invalid request, got \(String(describing: error))")
        return
      }
      #expect(reason.contains("background session \"com.example.sync\""))
      #expect(reason.contains("default or ephemeral configuration"))
    }
  #endif
}

/// Which authentication challenges a session Errand creates lets URLSession answer with the
/// system's credentials.
@Suite(.timeLimit(.minutes(3))) struct SessionChallengeTests {
  static let others = [
    NSURLAuthenticationMethodHTTPBasic, NSURLAuthenticationMethodHTTPDigest,
    NSURLAuthenticationMethodNTLM, NSURLAuthenticationMethodNegotiate,
    "NSURLAuthenticationMethodClientCertificate", NSURLAuthenticationMethodDefault,
  ]

  /// Server trust is the system's to check; every other method gets no credential unless the
  /// app named it.
  @Test(arguments: ["NSURLAuthenticationMethodServerTrust"] + others)
  func onlyServerTrustAndChosenMethodsAreHandledByTheSystem(method: String) {
    let plain = SessionDelegate()
    let chosen = SessionDelegate(systemCredentials: [NSURLAuthenticationMethodNegotiate])
    let isTrust = method == "NSURLAuthenticationMethodServerTrust"
    #expect(
      plain.disposition(for: method) == (isTrust ? .performDefaultHandling : .rejectProtectionSpace)
    )
    let opted = isTrust || method == NSURLAuthenticationMethodNegotiate
    #expect(
      chosen.disposition(for: method) == (opted ? .performDefaultHandling : .rejectProtectionSpace))
  }
}
