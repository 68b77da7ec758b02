import Foundation

extension APIError {
  /// How the transfer went, where one got under way: the response's metrics for an unacceptable
  /// status or a body that did not decode; for a network failure, what the transport knew when
  /// it failed (the phases it reached, the bytes that came), from `CurlTransport` and
  /// `URLSessionTransport`. `nil` for a request never sent, and where the transport reported
  /// none (Errand's transports report none when the call's deadline or a cancellation ends their
  /// wait). The same as `context?.metrics` (``context``).
  ///
  /// ```swift
  /// } catch let error as APIError {
  ///   print("failed: \(error.localizedDescription) (\(error.metrics?.summary ?? "no transfer"))")
  /// }
  /// ```
  public var metrics: TransferMetrics? {
    context?.metrics
  }
}

extension TransferMetrics {
  /// `error` with these metrics in its context (``APIError/Context/metrics``), when it can
  /// carry one: a `URLError` (in its `userInfo`) or one of Errand's errors that carry a context;
  /// else `error`.
  package func attached(to error: any Error) -> any Error {
    guard var carrier = error as? any CarriesCallContext else { return error }
    var context = carrier.context ?? APIError.Context()
    context.metrics = self
    carrier.context = context
    return carrier
  }
}
