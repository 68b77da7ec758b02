import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

extension HTTPResponse {
  /// Create a response from what URLSession returns.
  ///
  /// `HTTPURLResponse` keeps headers in a dictionary, so their order is lost; the fields come
  /// sorted by name. The `Set-Cookie` fields it joins into one value are split again, one
  /// cookie each (a comma followed by `name=` starts another).
  /// - Parameters:
  ///   - response: The response head.
  ///   - body: The body bytes.
  public init(_ response: HTTPURLResponse, body: Data) {
    // Names and values are strings (printed only when they are not), compared without copies.
    let fields = response.allHeaderFields.map { field in
      (field.key as? String ?? "\(field.key)", field.value as? String ?? "\(field.value)")
    }
    var headers = HTTPHeaders()
    headers.reserveCapacity(fields.count)
    for (name, value) in fields.sorted(by: { $0.0 < $1.0 }) {
      guard HTTPHeaders.sameName(name, "Set-Cookie") else {
        headers.add(name, value)
        continue
      }
      // `HTTPURLResponse` joins a response's `Set-Cookie` fields into one: each cookie is a
      // field of its own again.
      for field in SetCookie.fields(inCombined: value) {
        headers.add(name, field)
      }
    }
    self.init(status: response.statusCode, headers: headers, body: body, url: response.url)
  }

  /// The response as an `HTTPURLResponse` for a URL, for code that hands responses to
  /// URLSession machinery (a `URLProtocol`, for example).
  /// - Parameter url: The URL the response answers; defaults to ``url``.
  /// - Returns: The response head, or `nil` when there is no URL.
  public func httpURLResponse(for url: URL? = nil) -> HTTPURLResponse? {
    guard let url = url ?? self.url else { return nil }
    var fields: [String: String] = [:]
    for field in headers {
      fields[field.name] = fields[field.name].map { "\($0), \(field.value)" } ?? field.value
    }
    return HTTPURLResponse(
      url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: fields)
  }
}
