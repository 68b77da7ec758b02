import Errand
import Foundation

extension HAR {
  /// The root of an archive: its version, who wrote it and the entries.
  public struct Log: Sendable, Hashable, Codable {
    /// The format's version as read; Errand always writes `1.2`, the version it writes.
    public var version: String
    /// The application that wrote the archive.
    public var creator: Creator
    /// The browser that made the requests, when a browser did.
    public var browser: Creator?
    /// The pages the entries belong to, for tools that group requests by page.
    public var pages: [Page]?
    /// The exchanges, in the order the requests started.
    public var entries: [Entry]
    /// A note from the user or the tool.
    public var comment: String?

    /// Create a log.
    /// - Parameters:
    ///   - version: The format's version.
    ///   - creator: The application that wrote the archive.
    ///   - browser: The browser that made the requests, if any.
    ///   - pages: The pages, if any.
    ///   - entries: The exchanges.
    ///   - comment: A note.
    public init(
      version: String = "1.2", creator: Creator, browser: Creator? = nil, pages: [Page]? = nil,
      entries: [Entry] = [], comment: String? = nil
    ) {
      self.version = version
      self.creator = creator
      self.browser = browser
      self.pages = pages
      self.entries = entries
      self.comment = comment
    }

    private enum CodingKeys: String, CodingKey {
      case version, creator, browser, pages, entries, comment
    }

    /// Read a log, leniently: a missing version reads as `1.2`, a missing creator as an unnamed
    /// one, missing entries as none.
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError` when a field has the wrong type.
    public init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      version = try container.text(.version) ?? "1.2"
      creator = try container.value(.creator, or: Creator(name: "", version: ""))
      browser = try container.decodeIfPresent(Creator.self, forKey: .browser)
      pages = try container.decodeIfPresent([Page].self, forKey: .pages)
      entries = try container.value(.entries, or: [])
      comment = try container.decodeIfPresent(String.self, forKey: .comment)
    }

    /// Write the log.
    /// - Parameter encoder: The encoder.
    /// - Throws: The encoder's errors.
    public func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: CodingKeys.self)
      // Errand writes HAR 1.2, whatever version the archive was read as.
      try container.encode("1.2", forKey: .version)
      try container.encode(creator, forKey: .creator)
      try container.encodeIfPresent(browser, forKey: .browser)
      try container.encodeIfPresent(pages, forKey: .pages)
      try container.encode(entries, forKey: .entries)
      try container.encodeIfPresent(comment, forKey: .comment)
    }
  }

  /// The application that wrote an archive, or the browser that made its requests.
  public struct Creator: Sendable, Hashable, Codable {
    /// Its name, such as `WebInspector` or `Charles Proxy`.
    public var name: String
    /// Its version.
    public var version: String
    /// A note.
    public var comment: String?

    /// Create a creator.
    /// - Parameters:
    ///   - name: Its name.
    ///   - version: Its version.
    ///   - comment: A note.
    public init(name: String, version: String, comment: String? = nil) {
      self.name = name
      self.version = version
      self.comment = comment
    }

    /// Errand, at the version of this build.
    public static var errand: Creator {
      let agent = APIClient.Configuration.defaultUserAgent
      return Creator(
        name: "Errand", version: agent.split(separator: "/").last.map(String.init) ?? "")
    }

    private enum CodingKeys: String, CodingKey {
      case name, version, comment
    }

    /// Read a creator; a missing name or version reads as empty.
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError` when a field has the wrong type.
    public init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      name = try container.text(.name) ?? ""
      version = try container.text(.version) ?? ""
      comment = try container.decodeIfPresent(String.self, forKey: .comment)
    }

    /// Write the creator.
    /// - Parameter encoder: The encoder.
    /// - Throws: The encoder's errors.
    public func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: CodingKeys.self)
      try container.encode(name, forKey: .name)
      try container.encode(version, forKey: .version)
      try container.encodeIfPresent(comment, forKey: .comment)
    }
  }
}
