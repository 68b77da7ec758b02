import Errand
import Foundation

extension HAR {
  /// One exchange: the request, the response, and when and how long it took.
  public struct Entry: Sendable, Hashable, Codable {
    /// The ``Page/id`` of the page the request belongs to, if any.
    public var pageref: String?
    /// When the request started.
    public var startedDateTime: Date
    /// How long the exchange took in milliseconds: the sum of the ``timings`` that apply.
    public var time: Double
    /// The request.
    public var request: Request
    /// The response; a status of `0` means none came (the request was aborted or blocked).
    public var response: Response
    /// What the browser's cache held before and after.
    public var cache: Cache
    /// How long each phase took.
    public var timings: Timings
    /// The server's IP address.
    public var serverIPAddress: String?
    /// An identifier of the connection (a port number in Chrome).
    public var connection: String?
    /// A note.
    public var comment: String?

    /// Create an entry.
    /// - Parameters:
    ///   - pageref: The page the request belongs to, if any.
    ///   - startedDateTime: When the request started.
    ///   - time: How long the exchange took, in milliseconds.
    ///   - request: The request.
    ///   - response: The response.
    ///   - cache: What the cache held.
    ///   - timings: How long each phase took.
    ///   - serverIPAddress: The server's IP address.
    ///   - connection: An identifier of the connection.
    ///   - comment: A note.
    public init(
      pageref: String? = nil, startedDateTime: Date, time: Double = 0, request: Request,
      response: Response, cache: Cache = Cache(), timings: Timings = Timings(),
      serverIPAddress: String? = nil, connection: String? = nil, comment: String? = nil
    ) {
      self.pageref = pageref
      self.startedDateTime = startedDateTime
      self.time = time
      self.request = request
      self.response = response
      self.cache = cache
      self.timings = timings
      self.serverIPAddress = serverIPAddress
      self.connection = connection
      self.comment = comment
    }

    private enum CodingKeys: String, CodingKey {
      case pageref, startedDateTime, time, request, response, cache, timings, serverIPAddress
      case connection, comment
    }

    /// Read an entry, leniently: a missing date reads as 1970-01-01, a missing or invalid time
    /// as `0`, missing cache and timings as empty.
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError` when the request or the response is missing, or a field has the
    ///   wrong type.
    public init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      pageref = try container.text(.pageref)
      startedDateTime = try container.date(.startedDateTime, or: HAR.unknownDate)
      time = try container.milliseconds(.time, required: true)
      request = try container.decode(Request.self, forKey: .request)
      response = try container.decode(Response.self, forKey: .response)
      cache = try container.value(.cache, or: Cache())
      timings = try container.value(.timings, or: Timings())
      serverIPAddress = try container.text(.serverIPAddress)
      connection = try container.text(.connection)
      comment = try container.decodeIfPresent(String.self, forKey: .comment)
    }

    /// Write the entry, its date in UTC with milliseconds.
    /// - Parameter encoder: The encoder.
    /// - Throws: The encoder's errors.
    public func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: CodingKeys.self)
      try container.encodeIfPresent(pageref, forKey: .pageref)
      try container.encode(HARDate.string(startedDateTime), forKey: .startedDateTime)
      try container.encode(milliseconds: max(time, 0), fallback: 0, forKey: .time)
      try container.encode(request, forKey: .request)
      try container.encode(response, forKey: .response)
      try container.encode(cache, forKey: .cache)
      try container.encode(timings, forKey: .timings)
      try container.encodeIfPresent(serverIPAddress, forKey: .serverIPAddress)
      try container.encodeIfPresent(connection, forKey: .connection)
      try container.encodeIfPresent(comment, forKey: .comment)
    }
  }
}

extension HAR.Entry: CustomStringConvertible, CustomReflectable {
  /// The request and the response, for example `GET https://api.example.com/v1/dogs → 200 OK
  /// (application/json, 42 bytes)`, secrets hidden.
  public var description: String { "\(request) → \(response)" }

  /// The entry's fields, redacted by `Redaction.default` as ``HAR/redacted(with:)`` does
  /// (secrets the request carried are hidden where the response echoes them too).
  public var customMirror: Mirror {
    let shown = redacted(with: .default)
    return Mirror(
      self,
      children: [
        "startedDateTime": HARDate.string(startedDateTime), "time": time,
        "request": shown.request, "response": shown.response, "timings": timings,
        "serverIPAddress": serverIPAddress as Any, "comment": comment as Any,
      ], displayStyle: .struct)
  }
}
