@_spi(Transports) import Errand
import Foundation

/// A route answered ``StubResponse/passthrough``, but the stub has no upstream to send it to.
public struct NoPassthrough: Error, CustomStringConvertible, LocalizedError {
  /// The request, secrets hidden when printed.
  public var request: HTTPRequest

  /// What happened and what to do.
  public var description: String {
    "StubTransport has no upstream for the passthrough route that matched \(request.reportedDescription); "
      + "create it with StubTransport(passthrough:)"
  }

  /// The same as ``description``.
  public var errorDescription: String? { description }
}
