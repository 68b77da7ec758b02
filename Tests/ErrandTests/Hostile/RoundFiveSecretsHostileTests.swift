import Errand
import ErrandStubs
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Round five: an attacker's probes that a secret is printed, written to disk, sent to another
/// origin, or that one caller's data reaches another. Each test asserts what must happen.
@Suite(.timeLimit(.minutes(2))) struct RoundFiveSecretsHostileTests {
  static let token = "tok-R5-8f2a91c4e7"
  static let apiKey = "key-R5-55d0c3b9aa"
  static let tenantKey = "tenant-R5-0c9e17f3"
  static let password = "pw-R5-7b1e2d9f"
  static let signature = "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9"
  static let sessionToken = "FQoGZXIvYXdzR5sessiontoken"

  /// Every file under `folder`, read whole.
  static func contents(of folder: URL) -> [(URL, Data)] {
    let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)
    return (files?.allObjects as? [URL] ?? []).compactMap { url in
      var isFolder: ObjCBool = false
      guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder),
        !isFolder.boolValue, let data = try? Data(contentsOf: url)
      else { return nil }
      return (url, data)
    }
  }

  /// Whether `data` holds `text`, as written or base64-encoded (as a record's body is).
  static func contains(_ data: Data, _ text: String) -> Bool {
    data.range(of: Data(text.utf8)) != nil
      || data.range(of: Data(Data(text.utf8).base64EncodedString().utf8)) != nil
  }

  /// An S3 presigned URL, as a storage API hands one out: the signature and the session token
  /// are in the query.
  static let presigned = URL(
    string:
      "https://bucket.s3.eu-west-1.amazonaws.com/private/report.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256"
      + "&X-Amz-Credential=AKIDEXAMPLE%2F20261204%2Feu-west-1%2Fs3%2Faws4_request"
      + "&X-Amz-Date=20261204T000000Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host"
      + "&X-Amz-Security-Token=\(sessionToken)&X-Amz-Signature=\(signature)")!

  // MARK: - Printed forms of public values

  /// `HTTPHeaders` says its printed form hides credential values; so must `dump` of it, and the
  /// printed form of its fields, which is what `print(request.headers.fields)` or a debugger
  /// shows.
  @Test func headersInEveryPrintedFormHideCredentials() {
    let headers: HTTPHeaders = [
      "Authorization": "Bearer \(Self.token)", "Cookie": "session=\(Self.token)",
    ]
    var forms = printedForms(of: headers)
    forms += printedForms(of: headers.fields)
    forms += headers.fields.map { "\($0)" }
    for form in forms {
      #expect(!form.contains(Self.token), "\(form)")
    }
  }

  /// An endpoint holds the app's secrets before any request is made: a token header, an API
  /// key, a secret query value. `dump`, `print` and a debugger must not show them.
  @Test func anEndpointInEveryPrintedFormHidesItsSecrets() {
    let endpoint = Endpoint<Data>(
      path: "me", query: [URLQueryItem(name: "access_token", value: Self.token)],
      headers: ["Authorization": "Bearer \(Self.token)", "X-API-Key": Self.apiKey])
    for form in printedForms(of: endpoint) {
      #expect(!form.contains(Self.token), "\(form)")
      #expect(!form.contains(Self.apiKey), "\(form)")
    }
  }

  /// An absolute-URL endpoint whose URL carries a signature and a password: printed whole by
  /// `dump`.
  @Test func anAbsoluteEndpointInEveryPrintedFormHidesItsURLSecrets() {
    let endpoint = Endpoint<Data>(
      url: URL(string: "https://user:\(Self.password)@files.example.net/a?sig=\(Self.signature)")!,
      decoding: .data)
    for form in printedForms(of: endpoint) {
      #expect(!form.contains(Self.password), "\(form)")
      #expect(!form.contains(Self.signature), "\(form)")
    }
  }

  /// The client's configuration holds its default headers (an API key for one): a log line
  /// that prints the configuration must not show it.
  @Test func aClientConfigurationInEveryPrintedFormHidesItsKey() {
    let configuration = APIClient.Configuration(headers: [
      "X-API-Key": Self.apiKey, "Authorization": "Bearer \(Self.token)",
    ])
    for form in printedForms(of: configuration) {
      #expect(!form.contains(Self.apiKey), "\(form)")
      #expect(!form.contains(Self.token), "\(form)")
    }
  }

  /// `dump(client)`: the actor shows its stored properties, its configuration's headers
  /// included.
  @Test func aClientInEveryPrintedFormHidesItsKey() {
    let client = APIClient(
      baseURL: base, transport: StubTransport(),
      configuration: APIClient.Configuration(headers: ["X-API-Key": Self.apiKey]))
    for form in printedForms(of: client) {
      #expect(!form.contains(Self.apiKey), "\(form)")
    }
  }

  /// A `multipart/form-data` login form: its `password` field is a body field the redaction
  /// names, as in a URL-encoded form or JSON.
  @Test func aMultipartPasswordNeverPrints() throws {
    let form = MultipartForm(parts: [
      .field("username", "ann"), .field("password", Self.password),
      .field("client_secret", Self.token),
    ])
    let client = APIClient(baseURL: base, transport: StubTransport())
    let request = try client.makeRequest(
      for: Endpoint<Data>(method: .post, path: "login", body: .multipart(form)))
    var forms = printedForms(of: request)
    forms.append(request.cURLDescription)
    for form in forms {
      #expect(!form.contains(Self.password), "\(form)")
      #expect(!form.contains(Self.token), "\(form)")
    }
  }

  /// A multipart login refused with a body that echoes the password: the error must not show it.
  @Test func aMultipartPasswordEchoedInAnErrorNeverPrints() async throws {
    let stub = StubTransport { request in
      let body = String(decoding: request.body ?? Data(), as: UTF8.self)
      return .status(400, body: Data("bad form: \(body)".utf8))
    }
    let form = MultipartForm(parts: [.field("username", "ann"), .field("password", Self.password)])
    let client = APIClient(baseURL: base, transport: stub)
    let error = await #expect(throws: APIError.self) {
      _ = try await client.send(
        Endpoint<Data>(method: .post, path: "login", body: .multipart(form)))
    }
    for form in printedForms(of: error as Any) {
      #expect(!form.contains(Self.password), "\(form)")
    }
  }

  // MARK: - Presigned URLs

  /// An S3 presigned URL is a bearer credential: its `X-Amz-Signature` (and session token)
  /// must not show in what an error prints.
  @Test func aPresignedURLsSignatureNeverPrints() async throws {
    let stub = StubTransport { _ in .status(403, body: Data("<Error>AccessDenied</Error>".utf8)) }
    let client = APIClient(baseURL: base, transport: stub)
    let error = await #expect(throws: APIError.self) {
      _ = try await client.send(Endpoint<Data>(url: Self.presigned, decoding: .data))
    }
    var forms = printedForms(of: error as Any)
    if let request = error?.context?.request {
      forms += printedForms(of: request)
      forms.append(request.cURLDescription)
    }
    for form in forms {
      #expect(!form.contains(Self.signature), "\(form)")
      #expect(!form.contains(Self.sessionToken), "\(form)")
    }
  }

  /// A log line of a presigned download.
  @Test func aPresignedURLsSignatureNeverLogs() async throws {
    let lines = Locked<[String]>([])
    let stub = StubTransport { _ in .status(200, body: Data("%PDF".utf8)) }
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(middleware: [
        LoggingMiddleware { event in lines.withLock { $0.append("\(event)") } }
      ]))
    _ = try await client.send(Endpoint<Data>(url: Self.presigned, decoding: .data))
    let logged = lines.withLock { $0 }
    #expect(!logged.isEmpty)
    for line in logged {
      #expect(!line.contains(Self.signature), "\(line)")
      #expect(!line.contains(Self.sessionToken), "\(line)")
    }
  }

  /// The answer to a presigned URL is an answer to a request with credentials: it is not
  /// written to disk unless the cache is told it may.
  @Test func anAnswerToAPresignedURLStaysOffTheDisk() async throws {
    let folder = try TemporaryFolder()
    let cache = HTTPCache(directory: folder.url)
    let stub = StubTransport { request in
      .status(
        200,
        body: Data(
          (request.url.host == "api.example.com" ? "public answer R5" : "private report R5").utf8),
        headers: ["Cache-Control": "max-age=600"])
    }
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(middleware: [CachingMiddleware(cache: cache)]))
    _ = try await client.send(Endpoint<Data>(url: Self.presigned, decoding: .data))
    // A plain public answer, written after it, shows the store writes at all.
    _ = try await client.send(Endpoint<Data>(path: "public", decoding: .data))
    // Waits for the public answer's file (the folder holds VERSION and LOCK from the start).
    let dir = folder.url
    let written = await eventually {
      Self.contents(of: dir).contains { Self.contains($0.1, "public answer R5") }
    }
    #expect(written)
    for (url, data) in Self.contents(of: folder.url) {
      #expect(!Self.contains(data, "private report R5"), "\(url.lastPathComponent)")
    }
  }

  // MARK: - Archives

  /// A HAR of the stub's journal, made to be attached to a bug report: a multipart login's
  /// password and a presigned URL's signature are not in it.
  @Test func aHAROfAMultipartLoginAndAPresignedDownloadHoldsNoSecret() async throws {
    let stub = StubTransport { _ in .status(200, body: Data("ok".utf8)) }
    let client = APIClient(baseURL: base, transport: stub)
    let form = MultipartForm(parts: [.field("username", "ann"), .field("password", Self.password)])
    _ = try await client.send(Endpoint<Data>(method: .post, path: "login", body: .multipart(form)))
    _ = try await client.send(Endpoint<Data>(url: Self.presigned, decoding: .data))
    let text = String(decoding: try await stub.har().encoded(), as: UTF8.self)
    #expect(!text.contains(Self.password))
    #expect(!text.contains(Self.signature))
    #expect(!text.contains(Self.sessionToken))
  }

  /// A cassette recorded from an upstream is a file committed to a repository: a multipart
  /// login's password and a presigned URL's signature are not in it.
  @Test func aCassetteOfAMultipartLoginAndAPresignedDownloadHoldsNoSecret() async throws {
    let folder = try TemporaryFolder()
    let file = folder.appending("login.json")
    let upstream = StubTransport { _ in .status(200, body: Data("ok".utf8)) }
    let cassette = CassetteTransport(url: file, mode: .once, upstream: upstream)
    let client = APIClient(baseURL: base, transport: cassette)
    let form = MultipartForm(parts: [.field("username", "ann"), .field("password", Self.password)])
    _ = try await client.send(Endpoint<Data>(method: .post, path: "login", body: .multipart(form)))
    _ = try await client.send(Endpoint<Data>(url: Self.presigned, decoding: .data))
    let text = String(decoding: (try? Data(contentsOf: file)) ?? Data(), as: UTF8.self)
    #expect(!text.isEmpty, "the cassette was not written")
    #expect(!text.contains(Self.password))
    #expect(!text.contains(Self.signature))
    #expect(!text.contains(Self.sessionToken))
  }

  // MARK: - Disk

  /// The client's own tenant key is a secret (it never goes to another origin, named in the
  /// redaction or not); a server's `Vary` on it must not put its value on disk.
  @Test func aVaryOnTheTenantKeyNeverWritesTheKeyToDisk() async throws {
    let folder = try TemporaryFolder()
    let cache = HTTPCache(directory: folder.url)
    let stub = StubTransport { request in
      .status(
        200, body: Data("report of tenant".utf8),
        headers: ["Cache-Control": "max-age=600", "Vary": "X-Tenant-Key"])
    }
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(
        headers: ["X-Tenant-Key": Self.tenantKey], middleware: [CachingMiddleware(cache: cache)]))
    _ = try await client.send(Endpoint<Data>(path: "report", decoding: .data))
    let dir = folder.url
    let written = await eventually {
      Self.contents(of: dir).contains { $0.0.pathExtension == "entry" }
    }
    #expect(written)
    for (url, data) in Self.contents(of: folder.url) {
      #expect(!Self.contains(data, Self.tenantKey), "\(url.lastPathComponent)")
    }
  }

  /// What a `Vary` on the tenant key keeps apart on disk stays apart when read back by another
  /// cache on the same folder (a new launch): the same tenant gets the stored answer, another
  /// tenant does not.
  @Test func aVaryOnTheTenantKeyKeepsTenantsApartOnDisk() async throws {
    let folder = try TemporaryFolder()
    let stub = StubTransport { request in
      .status(
        200, body: Data("report of \(request.headers["X-Tenant-Key"] ?? "-")".utf8),
        headers: ["Cache-Control": "max-age=600", "Vary": "X-Tenant-Key"])
    }
    func tenant(_ key: String, _ cache: HTTPCache) -> APIClient {
      APIClient(
        baseURL: base, transport: stub,
        configuration: APIClient.Configuration(
          headers: ["X-Tenant-Key": key], middleware: [CachingMiddleware(cache: cache)]))
    }
    let report = Endpoint<Data>(path: "report", decoding: .data)
    _ = try await tenant(Self.tenantKey, HTTPCache(directory: folder.url)).send(report)
    let dir = folder.url
    _ = await eventually { !Self.contents(of: dir).isEmpty }
    let again = try await tenant(Self.tenantKey, HTTPCache(directory: folder.url))
      .response(for: report)
    #expect(again.response.cacheStatus == .hit)
    #expect(String(decoding: again.value, as: UTF8.self) == "report of \(Self.tenantKey)")
    let other = try await tenant("tenant-other-1", HTTPCache(directory: folder.url))
      .response(for: report)
    #expect(other.response.cacheStatus == .miss)
    #expect(String(decoding: other.value, as: UTF8.self) == "report of tenant-other-1")
  }

  /// The same with a key the redaction names, put there by a middleware listed after the
  /// cache: still nothing of it on disk.
  @Test func aVaryOnAKeyAMiddlewareAddsNeverWritesTheKeyToDisk() async throws {
    let folder = try TemporaryFolder()
    let cache = HTTPCache(directory: folder.url)
    let stub = StubTransport { _ in
      .status(
        200, body: Data("report".utf8),
        headers: ["Cache-Control": "max-age=600", "Vary": "X-Session"])
    }
    var configuration = APIClient.Configuration(middleware: [
      CachingMiddleware(cache: cache), SetsHeader(name: "X-Session", value: Self.token),
    ])
    configuration.redaction.headers.insert("X-Session")
    let client = APIClient(baseURL: base, transport: stub, configuration: configuration)
    _ = try await client.send(Endpoint<Data>(path: "report", decoding: .data))
    _ = try await client.send(Endpoint<Data>(path: "public", decoding: .data))
    for (url, data) in Self.contents(of: folder.url) {
      #expect(!Self.contains(data, Self.token), "\(url.lastPathComponent)")
    }
  }

  /// A body the reader has not caught up with goes to a spill file in the temporary folder:
  /// the folder is shared with every user of the machine, so the file must be its owner's only
  /// (0600) from the moment it is created, or another user can open it before it is unlinked
  /// and read the rest of the authenticated body.
  #if os(Linux)
    @Test func aSpillFileIsOnlyItsOwnersToRead() async throws {
      let (body, writer) = HTTPBody.makeStream(expectedLength: nil) {}
      let chunk = Data(repeating: 0x41, count: 64 * 1024)
      for _ in 0..<(HTTPBody.memoryBudget / chunk.count + 40) {
        _ = writer.write(chunk)
      }
      var modes: [String: mode_t] = [:]
      let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
      for fd in fds {
        let link = "/proc/self/fd/\(fd)"
        guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: link),
          target.contains("errand-body-")
        else { continue }
        var info = stat()
        if stat(link, &info) == 0 {
          modes[target] = info.st_mode & 0o777
        }
      }
      writer.finish()
      body.cancel()
      #expect(!modes.isEmpty, "no spill file was open")
      for (path, mode) in modes {
        #expect(mode & 0o077 == 0, "\(path) has mode \(String(mode, radix: 8))")
      }
    }
  #endif

  // MARK: - Other origins

  /// The client's own tenant key stays home at an origin the app did not choose ("an API key in
  /// a header of your own stays home even if the redaction does not name it"): a redirect to
  /// another origin is such an origin.
  @Test func aRedirectToAnotherOriginLeavesTheClientsOwnKeyBehind() async throws {
    let stub = StubTransport(followsRedirects: true)
    await stub.on(
      RequestMatcher("host api") { $0.url.host == "api.example.com" },
      .status(302, headers: ["Location": "https://evil.example.net/landing"]))
    await stub.on(RequestMatcher("host evil") { $0.url.host == "evil.example.net" }, .status(200))
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(headers: ["X-Tenant-Key": Self.tenantKey]))
    _ = try await client.response(for: Endpoint<Data>(path: "go", decoding: .data))
    let requests = await stub.requests
    #expect(requests.map { $0.url.host ?? "" } == ["api.example.com", "evil.example.net"])
    if requests.count == 2 {
      #expect(requests[1].headers["X-Tenant-Key"] == nil)
    }
  }

  /// Another port is another origin: a `307` there leaves behind both the API key the
  /// redaction names and the client's own tenant key it does not.
  @Test func aRedirectToAnotherPortLeavesTheClientsOwnKeyBehind() async throws {
    let stub = StubTransport(followsRedirects: true)
    await stub.on(
      RequestMatcher("port 8443") { $0.url.port == 8443 },
      .status(200))
    await stub.on(
      RequestMatcher("default port") { $0.url.port == nil },
      .status(307, headers: ["Location": "https://api.example.com:8443/v1/elsewhere"]))
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(headers: [
        "X-Tenant-Key": Self.tenantKey, "X-Api-Key": Self.apiKey,
      ]))
    _ = try await client.response(for: Endpoint<Data>(path: "go", decoding: .data))
    let requests = await stub.requests
    #expect(requests.count == 2)
    if requests.count == 2 {
      #expect(requests[1].headers["X-Api-Key"] == nil)
      #expect(requests[1].headers["X-Tenant-Key"] == nil)
    }
  }

  // MARK: - Echoes outside the body

  /// A server that quotes the token it refused in a response header (`WWW-Authenticate`'s
  /// `error_description`): the error must not print it.
  @Test func aTokenEchoedInAResponseHeaderNeverPrints() async throws {
    let stub = StubTransport { request in
      let token = (request.headers["Authorization"] ?? "").replacingOccurrences(
        of: "Bearer ", with: "")
      return .status(
        401,
        headers: [
          "WWW-Authenticate":
            "Bearer error=\"invalid_token\", error_description=\"token \(token) expired\""
        ])
    }
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(headers: ["Authorization": "Bearer \(Self.token)"]))
    let error = await #expect(throws: APIError.self) {
      _ = try await client.send(Endpoint<Data>(path: "me", decoding: .data))
    }
    for form in printedForms(of: error as Any) {
      #expect(!form.contains(Self.token), "\(form)")
    }
  }

  /// A JSON login body with a numeric PIN (`{"pin": 73912846}`), the PIN named in the redaction:
  /// a server that quotes it back in its error text must not have it printed.
  @Test func aNumericSecretEchoedInAnErrorNeverPrints() async throws {
    struct Login: Encodable, Sendable {
      var user: String
      var pin: Int
    }
    let stub = StubTransport { _ in
      .status(
        422, body: Data("{\"message\":\"pin 73912846 is not valid for ann\"}".utf8),
        headers: ["Content-Type": "application/json"])
    }
    var configuration = APIClient.Configuration()
    configuration.redaction.bodyFields.insert("pin")
    let client = APIClient(baseURL: base, transport: stub, configuration: configuration)
    let error = await #expect(throws: APIError.self) {
      _ = try await client.send(
        Endpoint<Data>(
          method: .post, path: "login", body: .json(Login(user: "ann", pin: 73_912_846))))
    }
    for form in printedForms(of: error as Any) {
      #expect(!form.contains("73912846"), "\(form)")
    }
  }

  // MARK: - Other callers

  /// Two calls to the same URL, one with a user and password in its URL, the other with
  /// another's: they must not share one exchange.
  @Test func callsWithDifferentURLCredentialsDoNotShare() async throws {
    let gate = AsyncGate()
    let stub = StubTransport { request in
      await gate.wait()
      return .status(200, body: Data("inbox of \(request.url.user ?? "-")".utf8))
    }
    var configuration = APIClient.Configuration()
    configuration.sharesInFlightRequests = true
    let client = APIClient(
      baseURL: URL(string: "https://api.example.com/v1")!, transport: stub,
      configuration: configuration)
    let ann = Task {
      try await client.send(
        Endpoint<Data>(
          url: URL(string: "https://ann:pw-ann-1@api.example.com/v1/inbox")!, decoding: .data))
    }
    let bob = Task {
      try await client.send(
        Endpoint<Data>(
          url: URL(string: "https://bob:pw-bob-2@api.example.com/v1/inbox")!, decoding: .data))
    }
    #expect(await eventually { client.inFlight.count == 2 })
    _ = try await stub.nextRequest()
    await gate.open()
    let annInbox = String(decoding: try await ann.value, as: UTF8.self)
    let bobInbox = String(decoding: try await bob.value, as: UTF8.self)
    #expect(annInbox == "inbox of ann")
    #expect(bobInbox == "inbox of bob")
  }
}
