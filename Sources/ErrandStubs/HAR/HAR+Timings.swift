import Foundation

extension HAR {
  /// How long each phase of an exchange took, in milliseconds; `-1` for a phase that does not
  /// apply (no DNS lookup on a reused connection, no TLS over plain HTTP).
  public struct Timings: Sendable, Hashable, Codable {
    /// Waiting for a connection.
    public var blocked: Double
    /// Resolving the host name.
    public var dns: Double
    /// Opening the connection, TLS included.
    public var connect: Double
    /// Sending the request.
    public var send: Double
    /// Waiting for the first byte of the response.
    public var wait: Double
    /// Reading the response.
    public var receive: Double
    /// The TLS handshake, which ``connect`` includes.
    public var ssl: Double
    /// A note.
    public var comment: String?

    /// Create timings.
    /// - Parameters:
    ///   - blocked: Waiting for a connection, or `-1`.
    ///   - dns: Resolving the host name, or `-1`.
    ///   - connect: Opening the connection, or `-1`.
    ///   - send: Sending the request.
    ///   - wait: Waiting for the first byte.
    ///   - receive: Reading the response.
    ///   - ssl: The TLS handshake, or `-1`.
    ///   - comment: A note.
    public init(
      blocked: Double = -1, dns: Double = -1, connect: Double = -1, send: Double = 0,
      wait: Double = 0, receive: Double = 0, ssl: Double = -1, comment: String? = nil
    ) {
      self.blocked = blocked
      self.dns = dns
      self.connect = connect
      self.send = send
      self.wait = wait
      self.receive = receive
      self.ssl = ssl
      self.comment = comment
    }

    /// The sum of the phases that apply, which is an entry's ``Entry/time`` (``ssl`` is part of
    /// ``connect`` and not added again).
    public var total: Double {
      [blocked, dns, connect, send, wait, receive].filter { $0.isFinite && $0 > 0 }.reduce(0, +)
    }

    private enum CodingKeys: String, CodingKey {
      case blocked, dns, connect, send, wait, receive, ssl, comment
    }

    /// Read timings, leniently: an optional phase that is missing, negative or not finite reads
    /// as `-1`, a required one (`send`, `wait`, `receive`) as `0`.
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError` when a field has the wrong type.
    public init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      blocked = try container.milliseconds(.blocked)
      dns = try container.milliseconds(.dns)
      connect = try container.milliseconds(.connect)
      send = try container.milliseconds(.send, required: true)
      wait = try container.milliseconds(.wait, required: true)
      receive = try container.milliseconds(.receive, required: true)
      ssl = try container.milliseconds(.ssl)
      comment = try container.decodeIfPresent(String.self, forKey: .comment)
    }

    /// Write the timings: `-1` for an optional phase that is negative or not finite, `0` for a
    /// required one.
    /// - Parameter encoder: The encoder.
    /// - Throws: The encoder's errors.
    public func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: CodingKeys.self)
      for (key, value) in [
        (CodingKeys.blocked, blocked), (.dns, dns), (.connect, connect), (.ssl, ssl),
      ] {
        try container.encode(value.isFinite && value >= 0 ? value : -1, forKey: key)
      }
      for (key, value) in [(CodingKeys.send, send), (.wait, wait), (.receive, receive)] {
        try container.encode(value.isFinite && value >= 0 ? value : 0, forKey: key)
      }
      try container.encodeIfPresent(comment, forKey: .comment)
    }
  }

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
