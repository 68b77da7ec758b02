import Foundation
import TestSupport
import Testing

@testable import Errand

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Hostile review of what round three changed for Apple platforms outside the cache and the
/// body's end: the system log's public parts, and the sessions `URLSessionTransport` builds.
/// Each test asserts the safe behaviour, so a failure is a finding.
@Suite(.timeLimit(.minutes(3))) struct AppleSurfaceHostileTests {
  /// The metrics line `osLog` logs publicly says how the transfer went, never with whom: no
  /// peer address or port (which locate a person's network), however the metrics were filled.
  @Test func theMetricsLinesPublicPartsNameNoPeer() {
    var metrics = TransferMetrics.tlsConnection(reused: false)
    metrics.remoteAddress = "198.51.100.23"
    metrics.remotePort = 8443
    metrics.protocolName = "h2"
    var hop = TransferMetrics()
    hop.remoteAddress = "198.51.100.24"
    metrics.redirects = [hop]
    let event = LogEvent(
      kind: .metrics, method: .get, url: "https://api.example.com/v1/dogs", headers: [:],
      metrics: metrics)
    let parts = event.parts
    for publicPart in [parts.lead, parts.tail] {
      #expect(!publicPart.contains("198.51.100"))
      #expect(!publicPart.contains("8443"))
    }
    #expect(parts.tail.contains("h2"))
  }

  #if !canImport(FoundationNetworking)
    /// A background configuration is refused call by call; the transport must not make a session
    /// with its identifier meanwhile. Apple's documentation: one session per identifier, several
    /// are undefined behaviour, and the system hands the app's background transfers' events to
    /// whichever it reconnects, which here would be a delegate that ignores them.
    /// (FoundationNetworking has no background sessions.)
    @Test func aRefusedBackgroundConfigurationMakesNoSessionWithItsIdentifier() async throws {
      let configuration = URLSessionConfiguration.background(withIdentifier: "com.example.sync")
      let transport = URLSessionTransport(configuration: configuration)
      #expect(transport.session.configuration.identifier == nil, "a second background session")
      let request = HTTPRequest(method: .get, url: url("http://127.0.0.1:9/never"))
      for streams in [false, true] {
        let error = await #expect(throws: APIError.self) {
          _ = try await transport.exchange(request, Exchange(streams: streams))
        }
        guard case .invalidRequest(let reason) = error else {
          Issue.record("expected an invalid request, got \(String(describing: error))")
          continue
        }
        #expect(reason.contains("background session \"com.example.sync\""))
      }
    }
  #endif
}
