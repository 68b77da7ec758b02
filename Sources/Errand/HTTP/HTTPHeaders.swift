/// An ordered list of HTTP header fields with case-insensitive names.
///
/// Fields keep the order they were added in, and a name may repeat. Lookups ignore the case of
/// the name, so `headers["content-type"]` finds `Content-Type`. Two header lists are equal when
/// they hold the same values for each name (in the same order where a name repeats); the order
/// between different names does not matter, because HTTP gives it no meaning.
///
/// ```swift
/// var headers: HTTPHeaders = ["Accept": "application/json", "X-Trace": "abc"]
/// headers["accept"]            // "application/json"
/// headers.add("Cache-Control", "no-cache")
/// ```
public struct HTTPHeaders: Sendable, Hashable {
  /// One header field: a name and its value.
  public struct Field: Sendable, Hashable, CustomStringConvertible {
    /// The field name as written, for example `Content-Type`.
    public var name: String
    /// The field value, for example `application/json`.
    public var value: String

    /// Create a field.
    /// - Parameters:
    ///   - name: The field name; lookups ignore its case.
    ///   - value: The field value.
    public init(name: String, value: String) {
      self.name = name
      self.value = value
    }

    /// Two fields are equal when their names match ignoring case and their values match exactly.
    public static func == (lhs: Field, rhs: Field) -> Bool {
      lhs.value == rhs.value && lhs.name.lowercased() == rhs.name.lowercased()
    }

    /// Hash the lowercased name and the value, consistently with `==`.
    public func hash(into hasher: inout Hasher) {
      hasher.combine(name.lowercased())
      hasher.combine(value)
    }

    /// The field as it would appear on the wire, `Name: value`, except that the value of a
    /// header ``Redaction/default`` hides (`Authorization`, `Cookie`, `X-API-Key`, …) reads
    /// `<redacted>`, and so do the secrets of a URL in a `Location` or a `Link`: a printed list
    /// of fields is a log line too.
    public var description: String {
      "\(name): \(shownValue)"
    }

    /// The value as ``description`` and `dump` show it: as ``Redaction/default`` redacts it.
    var shownValue: String {
      Redaction.default.redact(HTTPHeaders([self])).fields.first?.value ?? value
    }
  }

  /// The fields in the order they were added.
  public private(set) var fields: [Field]

  /// Create a header list from fields, keeping their order.
  /// - Parameter fields: The fields; repeated names are kept.
  public init(_ fields: [Field] = []) {
    self.fields = fields
  }

  /// The first value for a name, ignoring case; setting replaces every field with that name
  /// (keeping the position of the first), and setting `nil` removes them.
  /// - Parameter name: The field name, in any case.
  public subscript(name: String) -> String? {
    get {
      fields.first { Self.sameName($0.name, name) }?.value
    }
    set {
      let position = fields.firstIndex { Self.sameName($0.name, name) }
      if position != nil {
        fields.removeAll { Self.sameName($0.name, name) }
      }
      guard let newValue else { return }
      fields.insert(Field(name: name, value: newValue), at: position ?? fields.endIndex)
    }
  }

  /// Every value for a name, ignoring case, in the order they were added.
  /// - Parameter name: The field name, in any case.
  /// - Returns: The values, empty when the name is absent.
  public func values(for name: String) -> [String] {
    fields.filter { Self.sameName($0.name, name) }.map(\.value)
  }

  /// Whether two header names are equal ignoring ASCII case, without allocating.
  static func sameName(_ lhs: String, _ rhs: String) -> Bool {
    guard lhs.utf8.count == rhs.utf8.count else { return false }
    return zip(lhs.utf8, rhs.utf8).allSatisfy { asciiLowercase($0) == asciiLowercase($1) }
  }

  private static func asciiLowercase(_ byte: UInt8) -> UInt8 {
    (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
  }

  /// Whether a field with this name is present, ignoring case.
  /// - Parameter name: The field name, in any case.
  /// - Returns: `true` when at least one field has that name.
  public func contains(_ name: String) -> Bool {
    self[name] != nil
  }

  /// Make room for `count` fields, so that a head read field by field grows its storage once.
  package mutating func reserveCapacity(_ count: Int) {
    fields.reserveCapacity(count)
  }

  /// Append a field, keeping any existing fields with the same name.
  /// - Parameters:
  ///   - name: The field name.
  ///   - value: The field value.
  public mutating func add(_ name: String, _ value: String) {
    fields.append(Field(name: name, value: value))
  }

  /// Remove every field with this name, ignoring case.
  /// - Parameter name: The field name, in any case.
  public mutating func remove(_ name: String) {
    self[name] = nil
  }

  /// Merge another list into this one: each name present in `other` replaces this list's fields
  /// of that name.
  /// - Parameter other: The fields that win.
  public mutating func merge(_ other: HTTPHeaders) {
    guard !other.fields.isEmpty else { return }
    fields.removeAll { field in other.fields.contains { Self.sameName($0.name, field.name) } }
    fields.append(contentsOf: other.fields)
  }

  /// A copy of this list with another merged in, as `merge(_:)` does.
  /// - Parameter other: The fields that win.
  /// - Returns: The merged list.
  public func merging(_ other: HTTPHeaders) -> HTTPHeaders {
    var copy = self
    copy.merge(other)
    return copy
  }

  /// The number of fields.
  public var count: Int { fields.count }

  /// Whether the list has no fields.
  public var isEmpty: Bool { fields.isEmpty }

  /// Compare by name (ignoring case) and value; only the order within a repeated name counts.
  public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
    lhs.canonicalFields == rhs.canonicalFields
  }

  /// Hash consistently with `==`.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(canonicalFields)
  }

  /// The fields as lowercased-name/value pairs, stably sorted by name.
  private var canonicalFields: [Field] {
    fields.enumerated()
      .map {
        (
          offset: $0.offset,
          field: Field(name: $0.element.name.lowercased(), value: $0.element.value)
        )
      }
      .sorted { ($0.field.name, $0.offset) < ($1.field.name, $1.offset) }
      .map(\.field)
  }
}

extension HTTPHeaders: ExpressibleByDictionaryLiteral {
  /// Create a header list from a dictionary literal, keeping the order written.
  /// - Parameter elements: Name and value pairs; a repeated name adds another field.
  public init(dictionaryLiteral elements: (String, String)...) {
    self.init(elements.map { Field(name: $0.0, value: $0.1) })
  }
}

extension HTTPHeaders: Sequence {
  /// Iterate over the fields in order.
  public func makeIterator() -> IndexingIterator<[Field]> {
    fields.makeIterator()
  }
}

extension HTTPHeaders: CustomStringConvertible {
  /// The names, lowercased, whose values Errand hides whenever it prints headers, whatever the
  /// ``Redaction``: `authorization`, `proxy-authorization`, `cookie` and `set-cookie`.
  static let sensitiveNames: Set<String> = [
    "authorization", "proxy-authorization", "cookie", "set-cookie",
  ]

  /// The value printed in place of a hidden header value.
  public static let redactedValue = "<redacted>"

  /// The fields one per line as `Name: value`, with what ``Redaction/default`` hides hidden
  /// (credential and API key values, secrets in a `Location`'s URL), as `dump` shows them;
  /// ``Redaction/redact(_:)-(HTTPHeaders)`` with a redaction of your own hides more.
  public var description: String {
    Redaction.default.redact(self).fields.map(\.description).joined(separator: "\n")
  }
}
