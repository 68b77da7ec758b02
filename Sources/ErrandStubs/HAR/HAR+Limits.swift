extension HAR {
  /// How large a HAR Errand reads, so that a huge or hostile file is refused before it is read
  /// whole.
  ///
  /// ```swift
  /// let har = try HAR(contentsOf: url, limits: HAR.Limits(maximumDocumentSize: 500_000_000))
  /// ```
  public struct Limits: Sendable, Hashable {
    /// The largest document read, in bytes: 100 MiB by default. A larger file is refused after
    /// reading one byte more than this, however large it is (or whatever it is: `/dev/zero`).
    public var maximumDocumentSize: Int
    /// The largest body replayed, in bytes (a request's or a response's, decoded from base64
    /// if need be): 50 MiB by default. Checked on the text's length before it is decoded.
    public var maximumBodySize: Int

    /// Create limits.
    /// - Parameters:
    ///   - maximumDocumentSize: The largest document read, in bytes.
    ///   - maximumBodySize: The largest body replayed, in bytes.
    public init(maximumDocumentSize: Int = 104_857_600, maximumBodySize: Int = 52_428_800) {
      self.maximumDocumentSize = maximumDocumentSize
      self.maximumBodySize = maximumBodySize
    }

    /// 100 MiB for a document, 50 MiB for a body.
    public static let `default` = Limits()
  }
}
