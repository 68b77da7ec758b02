import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

extension HTTPRequest {
  /// The request as a `URLRequest`: method, URL, headers (a repeated name is joined with commas),
  /// body and, when set, the timeout as `timeoutInterval`.
  public var urlRequest: URLRequest {
    var request = URLRequest(url: url)
    request.httpMethod = method.rawValue
    for field in headers {
      request.addValue(field.value, forHTTPHeaderField: field.name)
    }
    request.httpBody = body
    if let timeout {
      request.timeoutInterval = timeout.seconds
    }
    return request
  }

  /// Create a request from a `URLRequest`.
  ///
  /// The body comes from `httpBody`, or is read from `httpBodyStream` when only a stream is set
  /// (as it is inside a `URLProtocol`). The timeout is the request's `timeoutInterval`, which
  /// `URLRequest` sets to 60 seconds unless told otherwise; none when it is not finite or is
  /// longer than any call could last.
  /// - Parameter urlRequest: The request to convert.
  /// - Throws: ``APIError/invalidRequest(_:)`` when the request has no URL.
  public init(_ urlRequest: URLRequest) throws {
    guard let url = urlRequest.url else {
      throw APIError.invalidRequest("The URLRequest has no URL.")
    }
    var headers = HTTPHeaders()
    for (name, value) in (urlRequest.allHTTPHeaderFields ?? [:]).sorted(by: { $0.key < $1.key }) {
      headers.add(name, value)
    }
    var body = urlRequest.httpBody
    if body == nil, let stream = urlRequest.httpBodyStream {
      body = Data(reading: stream)
    }
    // An endless interval (`.infinity`, as apps write "never", or one of centuries) is no
    // timeout; a `Duration` cannot hold it.
    let interval = urlRequest.timeoutInterval
    self.init(
      method: HTTPMethod(rawValue: urlRequest.httpMethod ?? "GET"), url: url, headers: headers,
      body: body,
      timeout: interval.isFinite && abs(interval) < 1e12 ? .seconds(interval) : nil)
  }
}

extension Data {
  /// Read a stream to its end. A stream that fails part way gives the bytes read until then.
  init(reading stream: InputStream) {
    self.init()
    stream.open()
    defer { stream.close() }
    var buffer = [UInt8](repeating: 0, count: 16 * 1024)
    while true {
      let count = stream.read(&buffer, maxLength: buffer.count)
      guard count > 0 else { break }
      append(buffer, count: count)
    }
  }
}
