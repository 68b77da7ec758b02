import Foundation
import Testing

@testable import Errand

/// The parts a system log keeps apart make up the whole message, and the URL and the error text
/// are never in a part that `LoggingMiddleware.osLog` logs publicly.
@Suite(.timeLimit(.minutes(3))) struct LogEventPartsTests {
  static let secretPath = "https://api.example.com/users/ada.lovelace/search?q=divorce"
  static let secretError = "the server said: no account for ada.lovelace@example.com"

  static let events: [LogEvent] = [LogEvent.Kind.requestSent, .responseReceived, .failed, .metrics]
    .map { kind in
      var event = LogEvent(
        kind: kind, method: .get, url: secretPath, headers: [:], status: 200, bytes: 512,
        duration: .milliseconds(31), error: kind == .failed ? secretError : nil,
        metrics: kind == .metrics ? TransferMetrics() : nil)
      event.cacheStatus = kind == .responseReceived ? .hit : nil
      return event
    }

  @Test(arguments: events)
  func thePartsMakeTheMessageAndKeepDetailsOutOfThePublicOnes(_ event: LogEvent) {
    let parts = event.parts
    #expect(parts.lead + parts.url + parts.tail + (parts.error ?? "") == event.message)
    #expect(parts.url == Self.secretPath)
    for publicPart in [parts.lead, parts.tail] {
      #expect(!publicPart.contains("ada.lovelace"))
      #expect(!publicPart.contains("divorce"))
    }
    #expect(parts.lead.contains("GET"))
    if event.kind == .failed {
      #expect(parts.error == Self.secretError)
    }
  }
}
