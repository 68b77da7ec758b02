import Errand
import Foundation

/// The DogPatch API, on Errand: a list of dogs and the signed-in customer.
///
/// ```swift
/// let client = DogPatchClient(baseURL: URL(string: "https://api.dogpatch.example/v1")!,
///                             transport: URLSessionTransport(), token: "t0k3n")
/// let dogs = try await client.getDogs()
/// ```
public struct DogPatchClient: Sendable {
  /// Where the API lives, for example `https://api.dogpatch.example/v1`.
  public let baseURL: URL
  /// The Errand client that sends requests.
  public let api: APIClient

  /// `GET /dogs`.
  public static let dogs = Endpoint<[Dog]>(method: .get, path: "dogs")
  /// `GET /me`, which needs the customer's token.
  public static let me = Endpoint<Owner>(method: .get, path: "me", requiresAuthentication: true)

  /// Create a client.
  /// - Parameters:
  ///   - baseURL: Where the API lives.
  ///   - transport: What sends requests: `URLSessionTransport()`, a stub or a cassette.
  ///   - token: The customer's bearer token, for endpoints that need it.
  public init(baseURL: URL, transport: any Transport, token: String = "demo-token") {
    self.baseURL = baseURL
    self.api = APIClient(
      baseURL: baseURL, transport: transport,
      configuration: APIClient.Configuration(middleware: [
        BearerAuthenticationMiddleware(provider: FixedToken(token: token))
      ]))
  }

  /// The dogs for sale.
  /// - Returns: The dogs.
  /// - Throws: `APIError`.
  public func getDogs() async throws -> [Dog] {
    try await api.send(Self.dogs)
  }

  /// The signed-in customer.
  /// - Returns: The customer.
  /// - Throws: `APIError`.
  public func getOwner() async throws -> Owner {
    try await api.send(Self.me)
  }

  /// The dogs for sale, for callers that are not async: `completion` runs once, on `queue`.
  /// - Parameters:
  ///   - queue: Where `completion` runs; the main queue by default.
  ///   - completion: Receives the dogs or the error.
  /// - Returns: A handle that cancels the request.
  @discardableResult
  public func getDogs(
    queue: DispatchQueue = .main, completion: @escaping @Sendable (Result<[Dog], APIError>) -> Void
  ) -> RequestHandle {
    api.send(Self.dogs, queue: queue, completion: completion)
  }
}

/// A token that never changes; a real app would refresh it.
struct FixedToken: TokenProvider {
  let token: String

  func currentToken() async throws -> String? { token }
  func refreshToken() async throws -> String { token }
}
