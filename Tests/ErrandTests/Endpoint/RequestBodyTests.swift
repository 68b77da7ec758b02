import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(3))) struct RequestBodyTests {
  /// The request an endpoint with this body becomes.
  private func request(_ body: RequestBody, client: APIClient = makeClient()) throws -> HTTPRequest
  {
    try client.makeRequest(for: Endpoint<Void>(method: .post, path: "dogs", body: body))
  }

  private func text(_ request: HTTPRequest) -> String? {
    request.body.flatMap { String(data: $0, encoding: .utf8) }
  }

  @Test(
    arguments: [
      ([("name", "Rex"), ("age", "3")], "name=Rex&age=3"),
      ([("q", "rex the dog")], "q=rex+the+dog"),
      ([("a+b", "c&d=e")], "a%2Bb=c%26d%3De"),
      ([("emoji", "🐕")], "emoji=%F0%9F%90%95"),
      ([("safe", "*-._")], "safe=*-._"),
      ([("tilde", "~")], "tilde=%7E"),
      ([("chars", "a/b?c#d%")], "chars=a%2Fb%3Fc%23d%25"),
      ([("line", "a\r\nb")], "line=a%0D%0Ab"),
      ([("tag", "a"), ("tag", "b")], "tag=a&tag=b"),
      ([], ""),
    ] as [([(String, String)], String)])
  func encodesFormBodies(fields: [(String, String)], expected: String) throws {
    let request = try request(.form(fields))
    #expect(text(request) == expected)
    #expect(request.headers["Content-Type"] == "application/x-www-form-urlencoded")
  }

  @Test func encodesJSONWithSortedKeysAndUnescapedSlashes() throws {
    struct Photo: Encodable, Sendable {
      var url: String
      var caption: String
    }
    let request = try request(.json(Photo(url: "https://x.example/a/b.png", caption: "Rex")))
    #expect(text(request) == #"{"caption":"Rex","url":"https://x.example/a/b.png"}"#)
    #expect(request.headers["Content-Type"] == "application/json")
  }

  @Test func usesTheBodysOwnEncoderOverTheClients() throws {
    struct Owner: Encodable, Sendable { var firstName: String }
    let snake = JSONEncoder()
    snake.keyEncodingStrategy = .convertToSnakeCase
    #expect(
      text(try request(.json(Owner(firstName: "Ann"), encoder: snake))) == #"{"first_name":"Ann"}"#)
    #expect(text(try request(.json(Owner(firstName: "Ann")))) == #"{"firstName":"Ann"}"#)
  }

  @Test func usesTheClientsEncoder() throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    let client = makeClient(configuration: APIClient.Configuration(encoder: encoder))
    #expect(
      text(try request(.json(Dog(name: "Rex")), client: client)) == "{\n  \"name\" : \"Rex\"\n}")
  }

  @Test func reportsJSONThatCannotBeEncoded() throws {
    let error = try #require(throws: APIError.self) { try request(.json([Double.nan])) }
    let reason = try #require(error.invalidRequestReason)
    #expect(reason.hasPrefix("POST dogs: the body could not be encoded: [0]: "))
    #expect(reason.lowercased().contains("nan"))
  }

  @Test(arguments: [
    (Data([0x89, 0x50, 0x4E, 0x47]), "image/png"),
    (Data("plain".utf8), "text/plain; charset=utf-8"),
    (Data(), "application/octet-stream"),
  ])
  func sendsRawData(data: Data, contentType: String) throws {
    let request = try request(.data(data, contentType: contentType))
    #expect(request.body == data)
    #expect(request.headers["Content-Type"] == contentType)
  }

  @Test func rawDataDefaultsToOctetStream() throws {
    #expect(try request(.data(Data([1]))).headers["Content-Type"] == "application/octet-stream")
  }

  @Test(arguments: [
    (
      [MultipartForm.Part.field("name", "Rex")],
      "--B\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nRex\r\n--B--\r\n"
    ),
    (
      [.file("photo", filename: "rex.png", contentType: "image/png", data: Data("PNG".utf8))],
      "--B\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"rex.png\"\r\n"
        + "Content-Type: image/png\r\n\r\nPNG\r\n--B--\r\n"
    ),
    (
      [
        .field("name", "Rex"), .field("age", "3"),
        .file("doc", filename: "a.txt", data: Data("hi\r\n".utf8)),
      ],
      "--B\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nRex\r\n"
        + "--B\r\nContent-Disposition: form-data; name=\"age\"\r\n\r\n3\r\n"
        + "--B\r\nContent-Disposition: form-data; name=\"doc\"; filename=\"a.txt\"\r\n"
        + "Content-Type: application/octet-stream\r\n\r\nhi\r\n\r\n--B--\r\n"
    ),
    (
      [.file("f", filename: "say \"hi\"\r\n.txt", contentType: "text/plain", data: Data())],
      "--B\r\nContent-Disposition: form-data; name=\"f\"; filename=\"say %22hi%22%0D%0A.txt\"\r\n"
        + "Content-Type: text/plain\r\n\r\n\r\n--B--\r\n"
    ),
    ([], "--B--\r\n"),
  ])
  func encodesMultipartBodies(parts: [MultipartForm.Part], expected: String) throws {
    let request = try request(.multipart(MultipartForm(boundary: "B", parts: parts)))
    #expect(text(request) == expected)
    #expect(request.headers["Content-Type"] == "multipart/form-data; boundary=B")
  }

  @Test func randomBoundariesDifferAndAreValid() throws {
    let first = MultipartForm.randomBoundary()
    let second = MultipartForm.randomBoundary()
    #expect(first != second)
    #expect(first.hasPrefix("errand-") && first.count == 39)
    let request = try request(.multipart(MultipartForm(parts: [.field("a", "b")])))
    let contentType = try #require(request.headers["Content-Type"])
    let boundary = String(contentType.dropFirst("multipart/form-data; boundary=".count))
    #expect(text(request)?.hasPrefix("--\(boundary)\r\n") == true)
    #expect(text(request)?.hasSuffix("--\(boundary)--\r\n") == true)
  }

  @Test(arguments: [
    (
      MultipartForm(boundary: "", parts: []),
      "POST dogs: the multipart boundary \"\" must be 1 to 70 letters, digits or '()+_,-./:=?."
    ),
    (
      MultipartForm(boundary: String(repeating: "b", count: 71), parts: []),
      "POST dogs: the multipart boundary \"\(String(repeating: "b", count: 71))\" must be 1 to 70 "
        + "letters, digits or '()+_,-./:=?."
    ),
    (
      MultipartForm(boundary: "a\r\nb", parts: []),
      "POST dogs: the multipart boundary \"a\r\nb\" must be 1 to 70 letters, digits or '()+_,-./:=?."
    ),
    (
      MultipartForm(boundary: "XYZ", parts: [.field("note", "before --XYZ after")]),
      "POST dogs: the multipart boundary \"XYZ\" appears inside the part \"note\"."
    ),
    (
      MultipartForm(
        boundary: "B",
        parts: [.file("f", filename: "a", contentType: "text/plain\r\nX: 1", data: Data())]),
      "POST dogs: the content type of multipart part \"f\" contains a control character."
    ),
  ])
  func rejectsInvalidMultipartForms(form: MultipartForm, reason: String) throws {
    let error = try #require(throws: APIError.self) { try request(.multipart(form)) }
    #expect(error.invalidRequestReason == reason)
  }
}
