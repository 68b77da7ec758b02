import Errand
import ErrandTesting
import Foundation
import LoopbackServer
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Every transport checks every request it sends, whoever built it: a middleware or a direct
/// `send` cannot inject a header, smuggle a second request through the method, or set the headers
/// that frame the message.
@Suite(.timeLimit(.minutes(3))) struct RequestSmugglingTests {
  /// Requests no transport may put on the wire, and what the refusal says.
  enum Hostile: String, CaseIterable, CustomTestStringConvertible {
    case crlfInHeaderValue = "CR LF in a header value"
    case lfInHeaderValue = "LF in a header value"
    case crlfInHeaderName = "CR LF in a header name"
    case spaceInMethod = "a space in the method"
    case crlfInMethod = "CR LF in the method"
    case contentLength = "Content-Length"
    case transferEncoding = "Transfer-Encoding"
    case host = "Host"
    case connection = "Connection"
    case ftpScheme = "an ftp URL"

    var testDescription: String { rawValue }

    func request(to server: URL) -> HTTPRequest {
      let url = server.appendingPathComponent("target")
      var request = HTTPRequest(method: .post, url: url, body: Data("a=1".utf8))
      switch self {
      case .crlfInHeaderValue: request.headers["X-Note"] = "a\r\nX-Injected: 1"
      case .lfInHeaderValue: request.headers["X-Note"] = "a\nX-Injected: 1"
      case .crlfInHeaderName: request.headers["X-Injected: 1\r\nX-Note"] = "a"
      case .spaceInMethod: request.method = HTTPMethod(rawValue: "GET /smuggled HTTP/1.1")
      case .crlfInMethod:
        request.method = HTTPMethod(rawValue: "GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\nPOST")
      case .contentLength: request.headers["Content-Length"] = "0"
      case .transferEncoding: request.headers["transfer-encoding"] = "chunked"
      case .host: request.headers["Host"] = "internal.example"
      case .connection: request.headers["Connection"] = "Upgrade, X-Internal"
      case .ftpScheme: request.url = URL(string: "ftp://127.0.0.1:\(server.port ?? 21)/target")!
      }
      return request
    }

    /// What the refusal's reason says.
    var reason: String {
      switch self {
      case .crlfInHeaderValue: "contains a carriage return"
      case .lfInHeaderValue: "contains a line feed"
      case .crlfInHeaderName: "is not a valid token"
      case .spaceInMethod, .crlfInMethod: "the method is not a valid token"
      case .contentLength, .transferEncoding, .host, .connection: "frames the message"
      case .ftpScheme: "scheme must be http or https"
      }
    }
  }

  /// Errand's transports and the stub, which refuses the same requests.
  enum Sender: String, CaseIterable, CustomTestStringConvertible {
    case urlSession, stub, cassette
    #if os(Linux)
      case curl
    #endif
    var testDescription: String { rawValue }

    /// A transport of this kind; a cassette records into `folder`.
    func make(in folder: TemporaryFolder) -> any Transport {
      switch self {
      case .urlSession: TransportKind.urlSession.make()
      case .stub: StubTransport(passthrough: URLSessionTransport())
      case .cassette:
        CassetteTransport(
          url: folder.appending("cassette.json"), mode: .all, upstream: URLSessionTransport())
      #if os(Linux)
        case .curl: TransportKind.curl.make()
      #endif
      }
    }
  }

  @Test(arguments: Sender.allCases, Hostile.allCases)
  func aTransportRefusesWhatCouldSmuggleARequest(sender: Sender, hostile: Hostile) async throws {
    let server = try LoopbackServer { _ in ScriptedResponse(status: 200) }
    defer { server.stop() }
    let folder = try TemporaryFolder()
    let transport = sender.make(in: folder)
    let request = hostile.request(to: server.baseURL)
    let error = await #expect(throws: APIError.self) { _ = try await transport.send(request) }
    #expect(error?.kind == .invalidRequest)
    #expect(
      error?.invalidRequestReason?.contains(hostile.reason) == true, "\(String(describing: error))")
    // The server is still there and saw only the request that follows.
    let fine = HTTPRequest(url: server.url("/after"))
    #expect(try await transport.send(fine).status == 200)
    #expect(server.requests.map(\.path) == ["/after"])
  }

  /// Body files that are not regular files, made inside `folder`: none may be opened (a pipe
  /// would block the transport, a device never end) or sent as an empty body.
  enum HostileFile: String, CaseIterable, CustomTestStringConvertible {
    case namedPipe = "a named pipe"
    case device = "a link to /dev/zero"
    case folder = "a folder"
    case missing = "a missing file"
    var testDescription: String { rawValue }

    func make(in folder: TemporaryFolder) throws -> (URL, String) {
      let path = folder.appending("body").path
      switch self {
      case .namedPipe:
        try #require(mkfifo(path, 0o600) == 0)
        return (URL(fileURLWithPath: path), "is a named pipe (FIFO), not a regular file")
      case .device:
        try FileManager.default.createSymbolicLink(
          atPath: path, withDestinationPath: "/dev/zero")
        return (URL(fileURLWithPath: path), "is a device, not a regular file")
      case .folder:
        try FileManager.default.createDirectory(
          atPath: path, withIntermediateDirectories: false)
        return (URL(fileURLWithPath: path), "is a folder, not a regular file")
      case .missing:
        return (URL(fileURLWithPath: path), "does not exist")
      }
    }
  }

  @Test(arguments: Sender.allCases, HostileFile.allCases)
  func aBodyFileThatIsNotARegularFileIsRefusedBeforeSending(
    sender: Sender, file: HostileFile
  ) async throws {
    let folder = try TemporaryFolder()
    let (url, reason) = try file.make(in: folder)
    let server = try LoopbackServer { _ in ScriptedResponse(status: 200) }
    defer { server.stop() }
    let request = HTTPRequest(method: .put, url: server.url("/upload"), bodyFile: url)
    let error = await #expect(throws: APIError.self) {
      _ = try await sender.make(in: folder).send(request)
    }
    #expect(error?.invalidRequestReason?.contains("the body file \(url.path) \(reason)") == true)
    #expect(server.requests.isEmpty)
  }

  @Test(
    arguments: TransportKind.allCases,
    [("X-Signature", "a\r\nX-Injected: 1"), ("Content-Length", "0")])
  func aMiddlewareCannotInjectAHeader(kind: TransportKind, header: (String, String)) async throws {
    let server = try LoopbackServer()
    defer { server.stop() }
    let client = kind.client(
      server.baseURL,
      configuration: APIClient.Configuration(middleware: [
        SetsHeader(name: header.0, value: header.1)
      ]))
    let error = await #expect(throws: APIError.self) {
      try await client.send(
        Endpoint<Void>(method: .post, path: "target", body: .data(Data("a=1".utf8))))
    }
    #expect(error?.kind == .invalidRequest)
    #expect(
      error?.errorDescription?.contains("POST http://127.0.0.1:\(server.port)/target") == true)
    #expect(server.requests.isEmpty)
  }
}
