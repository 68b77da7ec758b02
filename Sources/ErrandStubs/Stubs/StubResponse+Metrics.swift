import Errand
import Foundation

extension StubResponse {
  /// This answer with transfer metrics of your choosing: every field `metrics` sets replaces
  /// what the stub measured (its delay as the time to the first byte, the sizes it sent), so a
  /// test can show what code does with a slow name lookup or a slow server.
  ///
  /// ```swift
  /// var slowLookup = TransferMetrics()
  /// slowLookup.domainLookupStart = .zero
  /// slowLookup.domainLookupEnd = .seconds(2)
  /// await stub.on(.get, "/v1/dogs", .json(dogs).withMetrics(slowLookup))
  /// ```
  /// - Parameter metrics: The fields to report; `nil` fields keep what the stub measured.
  /// - Returns: The answer, its metrics overlaid (every answer of a sequence or a handler).
  public func withMetrics(_ metrics: TransferMetrics) -> StubResponse {
    var copy = StubResponse(Self.overlay(kind, with: metrics), delay: delay)
    copy.terms = terms
    return copy
  }

  private static func overlay(_ kind: Kind, with metrics: TransferMetrics) -> Kind {
    switch kind {
    case .response(var response):
      response.metrics = (response.metrics ?? TransferMetrics()).overlaid(by: metrics)
      return .response(response)
    case .stream(var stream):
      stream.head.metrics = (stream.head.metrics ?? TransferMetrics()).overlaid(by: metrics)
      return .stream(stream)
    case .sequence(let answers):
      return .sequence(answers.map { $0.withMetrics(metrics) })
    case .handler(let handler):
      return .handler { try await handler($0, $1).withMetrics(metrics) }
    case .failure, .hang, .passthrough:
      return kind
    }
  }
}
