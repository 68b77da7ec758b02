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
}
