/// How far an upload or a download has got: reported after each piece, in order, never going
/// back; the last report's ``completedBytes`` is the total.
///
/// ```swift
/// try await client.download(video, to: destination) { progress in
///   print(progress.completedBytes, progress.expectedBytes ?? -1)
/// }
/// ```
public struct TransferProgress: Sendable, Hashable {
  /// The bytes sent or received so far.
  public var completedBytes: Int
  /// The total, when known in advance (a request body's size, a response's `Content-Length`).
  public var expectedBytes: Int?

  /// Create a report.
  /// - Parameters:
  ///   - completedBytes: The bytes so far.
  ///   - expectedBytes: The total, when known.
  public init(completedBytes: Int, expectedBytes: Int?) {
    self.completedBytes = completedBytes
    self.expectedBytes = expectedBytes
  }

  /// The share done, from 0 to 1, when the total is known.
  public var fractionCompleted: Double? {
    guard let expectedBytes else { return nil }
    guard expectedBytes > 0 else { return 1 }
    return min(1, Double(completedBytes) / Double(expectedBytes))
  }
}
