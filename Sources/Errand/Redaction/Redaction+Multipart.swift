import Foundation

extension Redaction {
  /// The byte ranges of the values of the `multipart/form-data` parts whose `name` is one of
  /// ``bodyFields``, or `nil` when `contentType` is not a multipart form with a boundary. A
  /// login form sent as multipart carries its `password` there as a URL-encoded one does.
  /// - Parameters:
  ///   - body: The body.
  ///   - contentType: The body's `Content-Type`.
  /// - Returns: The ranges, in order.
  func hiddenMultipartRanges(in body: Data, contentType: String?) -> [Range<Data.Index>]? {
    guard let contentType, contentType.lowercased().hasPrefix("multipart/"),
      let boundary = Self.boundary(of: contentType), !boundary.isEmpty
    else { return nil }
    let delimiter = Data("--\(boundary)".utf8)
    var starts: [Range<Data.Index>] = []
    var from = body.startIndex
    while from < body.endIndex, let found = body.range(of: delimiter, in: from..<body.endIndex) {
      starts.append(found)
      from = found.upperBound
    }
    var ranges: [Range<Data.Index>] = []
    let blank = Data("\r\n\r\n".utf8)
    for (delimiter, next) in zip(starts, starts.dropFirst()) {
      let part = delimiter.upperBound..<next.lowerBound
      guard let headEnd = body.range(of: blank, in: part) else { continue }
      let head = String(decoding: body[part.lowerBound..<headEnd.lowerBound], as: UTF8.self)
      guard let name = Self.partName(head), bodyFields.contains(name.lowercased()) else {
        continue
      }
      var end = next.lowerBound
      // The CRLF before the next delimiter belongs to the delimiter.
      if end - headEnd.upperBound >= 2, body[end - 2] == 0x0D, body[end - 1] == 0x0A {
        end -= 2
      }
      ranges.append(headEnd.upperBound..<max(end, headEnd.upperBound))
    }
    return ranges
  }

  /// A multipart body with the values of its hidden parts replaced by `<redacted>`.
  func redact(multipart body: Data, ranges: [Range<Data.Index>]) -> Data {
    var redacted = Data()
    var copied = body.startIndex
    for range in ranges {
      redacted.append(body[copied..<range.lowerBound])
      redacted.append(Data(HTTPHeaders.redactedValue.utf8))
      copied = range.upperBound
    }
    redacted.append(body[copied..<body.endIndex])
    return redacted
  }

  /// The `boundary` parameter of a `Content-Type`, unquoted.
  private static func boundary(of contentType: String) -> String? {
    parameter("boundary", of: Substring(contentType))
  }

  /// The `name` parameter of a part's `Content-Disposition`, unquoted.
  private static func partName(_ head: String) -> String? {
    head.split(whereSeparator: \.isNewline).lazy
      .filter { $0.lowercased().hasPrefix("content-disposition:") }
      .compactMap { parameter("name", of: $0) }.first
  }

  /// The value of the parameter `name` (lowercase) after a header value's first `;`, unquoted.
  private static func parameter(_ name: String, of value: Substring) -> String? {
    for parameter in value.split(separator: ";").dropFirst() {
      let pair = parameter.split(separator: "=", maxSplits: 1)
      guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == name
      else { continue }
      var value = pair[1].trimmingCharacters(in: .whitespaces)
      if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 {
        value = String(value.dropFirst().dropLast())
      }
      return value
    }
    return nil
  }
}
