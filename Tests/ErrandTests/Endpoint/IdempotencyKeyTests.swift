import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// The `Idempotency-Key` a request is built with (draft-ietf-httpapi-idempotency-key-header-06):
/// one field, a Structured Field String, generated per call or fixed, never on a safe method.
@Suite(.timeLimit(.minutes(3))) struct IdempotencyKeyTests {
  /// The UUID inside a generated field value, when the value is one quoted lowercase UUID.
  static func uuid(in value: String?) -> UUID? {
    guard let value, value.count == 38, value.first == "\"", value.last == "\"" else {
      return nil
    }
    let inner = String(value.dropFirst().dropLast())
    guard inner == inner.lowercased() else { return nil }
    return UUID(uuidString: inner)
  }

  @Test(arguments: [HTTPMethod.post, .patch, .put, .delete, "PURGE"])
  func unsafeMethodsSendOneGeneratedKey(method: HTTPMethod) throws {
    let endpoint = Endpoint<Void>(method: method, path: "dogs").withIdempotencyKey()
    let request = try makeClient().makeRequest(for: endpoint)
    #expect(request.headers.values(for: "Idempotency-Key").count == 1)
    #expect(Self.uuid(in: request.headers["Idempotency-Key"]) != nil)
  }

  @Test func eachBuildIsANewCallWithANewKey() throws {
    let client = makeClient()
    let endpoint = Endpoint<Void>(method: .post, path: "dogs").withIdempotencyKey()
    let keys = try (0..<20).map { _ in
      try client.makeRequest(for: endpoint).headers["Idempotency-Key"]
    }
    #expect(Set(keys).count == 20)
  }

  @Test(arguments: [
    ("plain", "order-42", #""order-42""#),
    ("a double quote", #"say "hi""#, #""say \"hi\"""#),
    ("a backslash", #"a\b"#, #""a\\b""#),
    ("spaces and a tilde", " a ~ ", #"" a ~ ""#),
  ])
  func fixedKeysAreSentAsStructuredFieldStrings(label: String, key: String, sent: String) throws {
    let endpoint = Endpoint<Void>(method: .post, path: "orders").withIdempotencyKey(.fixed(key))
    let request = try makeClient().makeRequest(for: endpoint)
    #expect(request.headers.values(for: "Idempotency-Key") == [sent], "\(label)")
  }

  @Test(arguments: [
    ("empty", "", "the idempotency key is empty."),
    ("not ASCII", "clé", "printable ASCII"),
    ("a line feed", "a\nb", "printable ASCII"),
    ("a tab", "a\tb", "printable ASCII"),
    ("DEL", "a\u{7F}", "printable ASCII"),
  ])
  func unsendableFixedKeysAreRefused(label: String, key: String, problem: String) async throws {
    let stub = StubTransport()
    let client = client(stub)
    let endpoint = Endpoint<Void>(method: .post, path: "orders").withIdempotencyKey(.fixed(key))
    let error = await #expect(throws: APIError.self, "\(label)") { try await client.send(endpoint) }
    guard case .invalidRequest(let reason) = error else {
      Issue.record("\(label): \(String(describing: error))")
      return
    }
    #expect(reason.hasPrefix("POST orders: the idempotency key"), "\(label)")
    #expect(reason.contains(problem), "\(label)")
    #expect(await stub.requests.isEmpty)
  }

  /// A safe method needs no key (repeating it changes nothing): asking for one is a mistake, said
  /// before anything is sent.
  @Test(arguments: [HTTPMethod.get, .head, .options, "TRACE"])
  func safeMethodsRefuseAKey(method: HTTPMethod) async throws {
    let stub = StubTransport()
    let client = client(stub)
    for key in [IdempotencyKey.generated, .fixed("k")] {
      let endpoint = Endpoint<Data>(method: method, path: "dogs", decoding: .data)
        .withIdempotencyKey(key)
      let error = await #expect(throws: APIError.self) { try await client.send(endpoint) }
      #expect(error?.kind == .invalidRequest)
      #expect(
        error?.errorDescription?.contains(
          "\(method) dogs: an idempotency key is for unsafe methods such as POST and PATCH; "
            + "\(method) is safe") == true, "\(String(describing: error))")
      #expect(throws: APIError.self) { try client.makeRequest(for: endpoint) }
    }
    #expect(await stub.requests.isEmpty)
  }

  /// The endpoint's own field is sent as written, whatever the option says.
  @Test(arguments: [IdempotencyKey.generated, .fixed("from-the-option")])
  func theEndpointsOwnKeyWins(option: IdempotencyKey) throws {
    let endpoint = Endpoint<Void>(
      method: .post, path: "orders", headers: ["idempotency-key": "mine"]
    ).withIdempotencyKey(option)
    let request = try makeClient().makeRequest(for: endpoint)
    #expect(request.headers.values(for: "Idempotency-Key") == ["mine"])
  }

  /// A key among the client's default headers would be shared by every call: the option puts
  /// the call's own in its place.
  @Test func aClientWideKeyGivesWayToTheCallsOwn() throws {
    let client = makeClient(
      configuration: APIClient.Configuration(headers: ["Idempotency-Key": #""shared""#]))
    let endpoint = Endpoint<Void>(method: .post, path: "orders").withIdempotencyKey()
    let first = try client.makeRequest(for: endpoint).headers.values(for: "Idempotency-Key")
    let second = try client.makeRequest(for: endpoint).headers.values(for: "Idempotency-Key")
    #expect(first.count == 1 && second.count == 1)
    #expect(Self.uuid(in: first.first) != nil && Self.uuid(in: second.first) != nil)
    #expect(first != second)
  }

  @Test(arguments: [HTTPMethod.post, .patch, .put])
  func withoutTheOptionNoKeyIsSent(method: HTTPMethod) throws {
    let request = try makeClient().makeRequest(for: Endpoint<Void>(method: method, path: "dogs"))
    #expect(!request.headers.contains("Idempotency-Key"))
  }

  /// The key is not a credential: printed as it is, unless the app names it a secret.
  @Test(arguments: [false, true])
  func theKeyIsPrintedUnlessTheAppHidesIt(hidden: Bool) throws {
    var configuration = APIClient.Configuration()
    if hidden {
      configuration.redaction.headers.insert("Idempotency-Key")
    }
    let endpoint = Endpoint<Void>(method: .post, path: "orders")
      .withIdempotencyKey(.fixed("order-42"))
    let request = try makeClient(configuration: configuration).makeRequest(for: endpoint)
    let printed = request.cURLDescription
    #expect(printed.contains("order-42") == !hidden, "\(printed)")
    #expect(printed.contains("Idempotency-Key: <redacted>") == hidden, "\(printed)")
  }
}
