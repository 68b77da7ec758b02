/// A decoded value together with the exchange that produced it.
public struct Response<Value> {
  /// The decoded value.
  public var value: Value
  /// The response as the transport returned it.
  public var response: HTTPResponse
  /// The request as the client built it from the endpoint, before the middleware (so without
  /// the credentials a middleware adds); ``HTTPResponse/request`` on ``response`` is the request
  /// as the transport got it.
  public var request: HTTPRequest

  /// Create a response.
  /// - Parameters:
  ///   - value: The decoded value.
  ///   - response: The response as the transport returned it.
  ///   - request: The request as the client built it.
  public init(value: Value, response: HTTPResponse, request: HTTPRequest) {
    self.value = value
    self.response = response
    self.request = request
  }
}

extension Response: Sendable where Value: Sendable {}
