import Foundation

// Old spellings, kept so that code written against earlier releases still compiles; each one
// says what replaced it.

/// Renamed ``BearerAuthenticationMiddleware``, so that every built-in middleware ends in
/// `Middleware`.
@available(*, deprecated, renamed: "BearerAuthenticationMiddleware")
public typealias BearerAuthentication = BearerAuthenticationMiddleware

extension Endpoint {
  /// A copy of this endpoint with a sample response.
  /// - Parameters:
  ///   - body: The sample body.
  ///   - status: The sample status.
  ///   - headers: The sample headers.
  /// - Returns: The changed endpoint.
  @available(*, deprecated, renamed: "withSample(_:status:headers:)")
  public func sample(_ body: Data, status: Int = 200, headers: HTTPHeaders = [:]) -> Endpoint {
    withSample(body, status: status, headers: headers)
  }
}
