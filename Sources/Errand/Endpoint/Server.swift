import Foundation

/// A named base URL for one environment of an API.
///
/// Apps declare their environments as static members and pick one when they create the client:
///
/// ```swift
/// extension Server {
///   static let production = Server("production", baseURL: URL(string: "https://api.dogpatch.example/v1")!)
///   static let staging = Server("staging", baseURL: URL(string: "https://staging.dogpatch.example/v1")!)
/// }
/// let client = APIClient(server: .staging, transport: URLSessionTransport())
/// ```
public struct Server: Sendable, Hashable {
  /// The environment's name, for example `staging`.
  public var name: String
  /// The base URL that endpoint paths are joined to; a path such as `/v1` is kept.
  public var baseURL: URL

  /// Create a server.
  /// - Parameters:
  ///   - name: The environment's name.
  ///   - baseURL: The base URL that endpoint paths are joined to.
  public init(_ name: String, baseURL: URL) {
    self.name = name
    self.baseURL = baseURL
  }
}

extension Server: CustomStringConvertible {
  /// The name and base URL, for example `staging (https://staging.example.com/v1)`.
  public var description: String { "\(name) (\(baseURL.absoluteString))" }
}
