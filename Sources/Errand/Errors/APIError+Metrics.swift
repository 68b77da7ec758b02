import Foundation

extension APIError {
  /// How the transfer went, where one got under way: the response's metrics for an unacceptable
  /// status or a body that did not decode; for a network failure, what the transport knew when
  /// it failed (the phases it reached, the bytes that came), from `CurlTransport` and
  /// `URLSessionTransport`. `nil` for a timeout, a cancellation, or a request never sent.
  ///
  /// ```swift
  /// } catch let error as APIError {
  ///   print("failed: \(error.localizedDescription) (\(error.metrics?.summary ?? "no transfer"))")
  /// }
  /// ```
  public var metrics: TransferMetrics? {
    if let response {
      return response.metrics
    }
    return urlError.flatMap { $0.userInfo[TransferMetrics.userInfoKey] as? TransferMetrics }
  }
}

extension TransferMetrics {
  /// Where a transport puts the metrics of a failed transfer in its `URLError`.
  package static let userInfoKey = "ErrandTransferMetrics"

  /// `error` with these metrics in its `userInfo`, when it is a `URLError`; else `error`.
  package func attached(to error: any Error) -> any Error {
    guard let urlError = error as? URLError else { return error }
    var info = urlError.userInfo
    info[Self.userInfoKey] = self
    return URLError(urlError.code, userInfo: info)
  }
}
