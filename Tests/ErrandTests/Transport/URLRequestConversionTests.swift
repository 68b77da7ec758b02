import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

@Suite(.timeLimit(.minutes(3))) struct URLRequestConversionTests {
  static let requests: [HTTPRequest] = [
    HTTPRequest(method: .get, url: url("https://api.example.com/v1/dogs"), timeout: .seconds(30)),
    HTTPRequest(
      method: .post, url: url("https://api.example.com/v1/dogs?notify=1"),
      headers: ["Content-Type": "application/json", "X-Trace": "abc"],
      body: Data(#"{"name":"Rex"}"#.utf8),
      timeout: .seconds(60)),
    HTTPRequest(
      method: .put, url: url("https://api.example.com/v1/caf%C3%A9/rex%20dog?q=a%2Bb"),
      headers: ["Accept": "*/*"], body: Data([0, 1, 2]), timeout: .milliseconds(2500)),
    HTTPRequest(method: .delete, url: url("http://127.0.0.1:8080/dogs/1"), timeout: .seconds(5)),
    HTTPRequest(method: "PURGE", url: url("https://cdn.example.com/x"), timeout: .seconds(1)),
    HTTPRequest(
      method: .patch, url: url("https://api.example.com/d"), body: Data(), timeout: .seconds(10)),
  ]

  @Test(arguments: requests)
  func roundTripsThroughURLRequest(request: HTTPRequest) throws {
    #expect(try HTTPRequest(request.urlRequest) == request)
  }

  @Test(arguments: requests)
  func setsEveryURLRequestField(request: HTTPRequest) throws {
    let urlRequest = request.urlRequest
    #expect(urlRequest.httpMethod == request.method.rawValue)
    #expect(urlRequest.url == request.url)
    #expect(urlRequest.httpBody == request.body)
    for field in request.headers {
      #expect(urlRequest.value(forHTTPHeaderField: field.name) == field.value)
    }
    #expect(urlRequest.allHTTPHeaderFields?.count ?? 0 == request.headers.count)
  }

  @Test(arguments: [
    (Duration.seconds(30), 30.0), (.milliseconds(2500), 2.5), (.milliseconds(1), 0.001),
  ])
  func setsTheTimeoutInterval(timeout: Duration, seconds: TimeInterval) {
    let request = HTTPRequest(url: url("https://x.example"), timeout: timeout)
    #expect(request.urlRequest.timeoutInterval == seconds)
  }

  @Test func joinsRepeatedHeaderNames() {
    let request = HTTPRequest(
      url: url("https://x.example"), headers: headers(("Accept", "a/b"), ("Accept", "c/d")))
    let joined = request.urlRequest.value(forHTTPHeaderField: "accept")
    #expect(
      joined?.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } == [
        "a/b", "c/d",
      ])
  }

  @Test func readsTheBodyStreamWhenThereIsNoBody() throws {
    var urlRequest = URLRequest(url: url("https://x.example/upload"))
    urlRequest.httpMethod = "POST"
    let payload = Data((0..<100_000).map { UInt8($0 % 251) })
    urlRequest.httpBodyStream = InputStream(data: payload)
    let request = try HTTPRequest(urlRequest)
    #expect(request.body == payload)
    #expect(request.method == .post)
    #expect(request.timeout == .seconds(60))
  }

  @Test func rejectsAURLRequestWithoutURL() throws {
    var urlRequest = URLRequest(url: url("https://x.example"))
    urlRequest.url = nil
    let error = try #require(throws: APIError.self) { try HTTPRequest(urlRequest) }
    #expect(error.invalidRequestReason == "The URLRequest has no URL.")
  }

  @Test func convertsHTTPURLResponse() throws {
    let head = try #require(
      HTTPURLResponse(
        url: url("https://api.example.com/v1/dogs"), statusCode: 201, httpVersion: "HTTP/1.1",
        headerFields: ["Content-Type": "application/json", "X-Request-Id": "r-1"]))
    let response = HTTPResponse(head, body: Data("[]".utf8))
    #expect(response.status == 201)
    #expect(response.headers == ["content-type": "application/json", "x-request-id": "r-1"])
    #expect(response.headers["X-REQUEST-ID"] == "r-1")
    #expect(response.body == Data("[]".utf8))
    #expect(response.url == url("https://api.example.com/v1/dogs"))
  }

  /// The `Set-Cookie` fields that `HTTPURLResponse` joins into one are one field per cookie
  /// again, however the server spelled the name; a name of the same length that is not
  /// `Set-Cookie` keeps its commas.
  @Test(arguments: ["Set-Cookie", "set-cookie", "SET-COOKIE", "Set-Cookiz"])
  func splitsJoinedCookiesWhateverTheNamesCase(_ name: String) throws {
    let joined = "a=1, b=2; Expires=Wed, 21 Oct 2026 07:28:00 GMT"
    let head = try #require(
      HTTPURLResponse(
        url: url("https://api.example.com/v1/dogs"), statusCode: 200, httpVersion: "HTTP/1.1",
        headerFields: [name: joined, "Content-Type": "application/json"]))
    let response = HTTPResponse(head, body: Data())
    let expected =
      name == "Set-Cookiz" ? [joined] : ["a=1", "b=2; Expires=Wed, 21 Oct 2026 07:28:00 GMT"]
    #expect(response.headers.values(for: name) == expected)
    #expect(response.headers["Content-Type"] == "application/json")
  }

  @Test(arguments: [200, 204, 404, 503])
  func roundTripsThroughHTTPURLResponse(status: Int) throws {
    let response = HTTPResponse(
      status: status, headers: ["Content-Type": "text/plain", "ETag": "\"v1\""],
      body: Data("ok".utf8),
      url: url("https://api.example.com/x"))
    let head = try #require(response.httpURLResponse())
    #expect(HTTPResponse(head, body: response.body) == response)
  }

  @Test func cannotFormAnHTTPURLResponseWithoutURL() {
    #expect(HTTPResponse(status: 200).httpURLResponse() == nil)
  }
}
