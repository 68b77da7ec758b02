import Errand
import Foundation

/// A transport for code paths that must not send anything: using it records a Swift Testing issue
/// at the line that created it, and the call fails with ``UnimplementedTransport/Unimplemented``.
///
/// Inject it where a test only builds requests or reads configuration, in the style of
/// swift-clocks' `UnimplementedClock`:
///
/// ```swift
/// let client = APIClient(baseURL: base, transport: .unimplemented())
/// let request = try client.makeRequest(for: Endpoint<[Dog]>(path: "dogs"))
/// ```
public struct UnimplementedTransport: Transport {
  /// The error every send throws, naming the transport and the request (secrets hidden).
  public struct Unimplemented: Error, CustomStringConvertible, LocalizedError {
    /// The name given to the transport.
    public var name: String
    /// The request it was asked to send.
    public var request: HTTPRequest

    /// `Unimplemented transport "<name>" was asked to send GET https://…`.
    public var description: String {
      "Unimplemented transport \"\(name)\" was asked to send \(request.reportedDescription)"
    }

    /// The same text as ``description``.
    public var errorDescription: String? { description }
  }

  /// The name shown in reports, for example `Transport`.
  public let name: String
  private let site: CallSite

  /// Create the transport.
  /// - Parameters:
  ///   - name: The name shown in reports.
  ///   - fileID: Where it is created, for the report; filled in by the compiler.
  ///   - filePath: Where it is created, for the report; filled in by the compiler.
  ///   - line: Where it is created, for the report; filled in by the compiler.
  ///   - column: Where it is created, for the report; filled in by the compiler.
  public init(
    _ name: String = "Transport", fileID: String = #fileID, filePath: String = #filePath,
    line: Int = #line, column: Int = #column
  ) {
    self.name = name
    self.site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
  }

  /// Record an issue at the creation site and throw ``Unimplemented``.
  /// - Parameter request: The request that should not have been sent.
  /// - Returns: Never.
  /// - Throws: ``Unimplemented``, always.
  public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
    let error = Unimplemented(name: name, request: request)
    site.recordIssue(error.description)
    throw error
  }
}

extension Transport where Self == UnimplementedTransport {
  /// A transport that fails the test when it is used, reporting at the line that created it.
  /// - Parameters:
  ///   - name: The name shown in reports.
  ///   - fileID: Where it is created; filled in by the compiler.
  ///   - filePath: Where it is created; filled in by the compiler.
  ///   - line: Where it is created; filled in by the compiler.
  ///   - column: Where it is created; filled in by the compiler.
  /// - Returns: The transport.
  public static func unimplemented(
    _ name: String = "Transport", fileID: String = #fileID, filePath: String = #filePath,
    line: Int = #line, column: Int = #column
  ) -> UnimplementedTransport {
    UnimplementedTransport(name, fileID: fileID, filePath: filePath, line: line, column: column)
  }

  /// A transport that fails the test when it is used; prefer ``unimplemented(_:fileID:filePath:line:column:)``,
  /// whose report points at your line.
  public static var unimplemented: UnimplementedTransport { UnimplementedTransport() }
}
