import Foundation

extension HAR {
  /// What a browser's cache held for an entry's request, before and after it.
  public struct Cache: Sendable, Hashable, Codable {
    /// The cache entry before the request, if there was one.
    public var beforeRequest: CacheState?
    /// The cache entry after the request, if there is one.
    public var afterRequest: CacheState?
    /// A note.
    public var comment: String?

    /// Create a cache description; empty by default, as Errand writes it.
    /// - Parameters:
    ///   - beforeRequest: The entry before the request.
    ///   - afterRequest: The entry after the request.
    ///   - comment: A note.
    public init(
      beforeRequest: CacheState? = nil, afterRequest: CacheState? = nil, comment: String? = nil
    ) {
      self.beforeRequest = beforeRequest
      self.afterRequest = afterRequest
      self.comment = comment
    }
  }

  /// One cache entry, as a browser describes it.
  public struct CacheState: Sendable, Hashable, Codable {
    /// When it expires, as the tool wrote it.
    public var expires: String?
    /// When it was last used, as the tool wrote it.
    public var lastAccess: String
    /// Its entity tag.
    public var eTag: String
    /// How many times it was used.
    public var hitCount: Int
    /// A note.
    public var comment: String?

    /// Create a cache entry's description.
    /// - Parameters:
    ///   - expires: When it expires.
    ///   - lastAccess: When it was last used.
    ///   - eTag: Its entity tag.
    ///   - hitCount: How many times it was used.
    ///   - comment: A note.
    public init(
      expires: String? = nil, lastAccess: String = "", eTag: String = "", hitCount: Int = 0,
      comment: String? = nil
    ) {
      self.expires = expires
      self.lastAccess = lastAccess
      self.eTag = eTag
      self.hitCount = hitCount
      self.comment = comment
    }

    private enum CodingKeys: String, CodingKey {
      case expires, lastAccess, eTag, hitCount, comment
    }

    /// Read a cache entry's description, leniently.
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError` when a field has the wrong type.
    public init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      expires = try container.text(.expires)
      lastAccess = try container.text(.lastAccess) ?? ""
      eTag = try container.text(.eTag) ?? ""
      hitCount = max(try container.size(.hitCount), 0)
      comment = try container.decodeIfPresent(String.self, forKey: .comment)
    }

    /// Write the cache entry's description.
    /// - Parameter encoder: The encoder.
    /// - Throws: The encoder's errors.
    public func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: CodingKeys.self)
      try container.encodeIfPresent(expires, forKey: .expires)
      try container.encode(lastAccess, forKey: .lastAccess)
      try container.encode(eTag, forKey: .eTag)
      try container.encode(hitCount, forKey: .hitCount)
      try container.encodeIfPresent(comment, forKey: .comment)
    }
  }
}
