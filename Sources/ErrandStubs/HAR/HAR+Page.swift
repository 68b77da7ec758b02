import Errand
import Foundation

extension HAR {
  /// A page that entries belong to, as browsers group requests.
  ///
  /// Printed with the secrets of its title hidden (Chrome names each page by its URL).
  public struct Page: Sendable, Hashable, Codable, CustomStringConvertible, CustomReflectable {
    /// When the page started loading.
    public var startedDateTime: Date
    /// The page's identifier, which entries name in ``Entry/pageref``.
    public var id: String
    /// The page's title.
    public var title: String
    /// When the page's events fired.
    public var pageTimings: PageTimings
    /// A note.
    public var comment: String?

    /// Create a page.
    /// - Parameters:
    ///   - startedDateTime: When the page started loading.
    ///   - id: The page's identifier.
    ///   - title: The page's title.
    ///   - pageTimings: When the page's events fired.
    ///   - comment: A note.
    public init(
      startedDateTime: Date, id: String, title: String = "",
      pageTimings: PageTimings = PageTimings(), comment: String? = nil
    ) {
      self.startedDateTime = startedDateTime
      self.id = id
      self.title = title
      self.pageTimings = pageTimings
      self.comment = comment
    }

    private enum CodingKeys: String, CodingKey {
      case startedDateTime, id, title, pageTimings, comment
    }

    /// Read a page, leniently.
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError` when a field has the wrong type.
    public init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      startedDateTime = try container.date(.startedDateTime, or: HAR.unknownDate)
      id = try container.text(.id) ?? ""
      title = try container.text(.title) ?? ""
      pageTimings = try container.value(.pageTimings, or: PageTimings())
      comment = try container.decodeIfPresent(String.self, forKey: .comment)
    }

    /// Write the page.
    /// - Parameter encoder: The encoder.
    /// - Throws: The encoder's errors.
    public func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: CodingKeys.self)
      try container.encode(HARDate.string(startedDateTime), forKey: .startedDateTime)
      try container.encode(id, forKey: .id)
      try container.encode(title, forKey: .title)
      try container.encode(pageTimings, forKey: .pageTimings)
      try container.encodeIfPresent(comment, forKey: .comment)
    }

    /// The identifier and the title, its secrets hidden by `Redaction.default`.
    public var description: String { "\(id): \(shownTitle)" }

    /// The page's fields, its title's secrets hidden.
    public var customMirror: Mirror {
      Mirror(
        self,
        children: [
          "startedDateTime": HARDate.string(startedDateTime), "id": id, "title": shownTitle,
          "pageTimings": pageTimings,
        ], displayStyle: .struct)
    }

    private var shownTitle: String { Redaction.default.redact(urlText: title) }
  }

  /// When a page's events fired, in milliseconds since it started; `-1` when not known.
  public struct PageTimings: Sendable, Hashable, Codable {
    /// When the page's content was loaded (`DOMContentLoaded`).
    public var onContentLoad: Double
    /// When the page was loaded (`load`).
    public var onLoad: Double
    /// A note.
    public var comment: String?

    /// Create page timings.
    /// - Parameters:
    ///   - onContentLoad: When the content was loaded, or `-1`.
    ///   - onLoad: When the page was loaded, or `-1`.
    ///   - comment: A note.
    public init(onContentLoad: Double = -1, onLoad: Double = -1, comment: String? = nil) {
      self.onContentLoad = onContentLoad
      self.onLoad = onLoad
      self.comment = comment
    }

    private enum CodingKeys: String, CodingKey {
      case onContentLoad, onLoad, comment
    }

    /// Read page timings; a missing or invalid time reads as `-1`.
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError` when a field has the wrong type.
    public init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      onContentLoad = try container.milliseconds(.onContentLoad)
      onLoad = try container.milliseconds(.onLoad)
      comment = try container.decodeIfPresent(String.self, forKey: .comment)
    }

    /// Write the page timings.
    /// - Parameter encoder: The encoder.
    /// - Throws: The encoder's errors.
    public func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: CodingKeys.self)
      try container.encode(milliseconds: onContentLoad, fallback: -1, forKey: .onContentLoad)
      try container.encode(milliseconds: onLoad, fallback: -1, forKey: .onLoad)
      try container.encodeIfPresent(comment, forKey: .comment)
    }
  }
}
