import Errand
import Foundation

extension HAR {
  /// Read a HAR, leniently (see ``HAR``); a UTF-8 byte order mark is skipped.
  ///
  /// The document's size is checked before it is parsed, and nesting deeper than 512 levels is
  /// refused, so no input exhausts memory or the stack.
  /// - Parameters:
  ///   - data: The document, as a tool exported it.
  ///   - limits: How large a document to read.
  /// - Throws: ``HARError``: `.tooLarge` for a document over ``Limits/maximumDocumentSize``,
  ///   `.invalidJSON` (with the line and column) for one that is not JSON, `.invalidField`
  ///   naming the entry and the field for one that is not a HAR.
  public init(data: Data, limits: Limits = .default) throws(HARError) {
    guard data.count <= limits.maximumDocumentSize else {
      throw HARError(
        .tooLarge,
        reason: "the document is \(data.count) bytes, over the limit of "
          + "\(limits.maximumDocumentSize) (HAR.Limits.maximumDocumentSize)")
    }
    let document: JSONValue
    do {
      // Windows tools may start the file with a UTF-8 byte order mark.
      let hasMark = data.starts(with: [0xEF, 0xBB, 0xBF])
      document = try JSONValue.parse(hasMark ? Data(data.dropFirst(3)) : data)
    } catch {
      throw HARError(
        .invalidJSON,
        reason: "not valid JSON: line \(error.line), column \(error.column): \(error.reason)")
    }
    do {
      self = try HAR(from: JSONValueDecoder(document))
    } catch let error as DecodingError {
      throw HARError(decoding: error)
    } catch {
      throw HARError(.invalidField, reason: "\(error)")
    }
  }

  /// Read a HAR file, leniently (see ``HAR``). A regular file (or a link to one) over
  /// ``Limits/maximumDocumentSize`` is refused by its size, before a byte is read; from anything
  /// else (a pipe, a device) at most one byte more than the limit is read.
  /// - Parameters:
  ///   - url: The file.
  ///   - limits: How large a document to read.
  /// - Throws: ``HARError``: `.unreadable` for a file that cannot be read, `.tooLarge` for one
  ///   over the limit, else what ``init(data:limits:)`` throws.
  public init(contentsOf url: URL, limits: Limits = .default) throws(HARError) {
    let limit = max(limits.maximumDocumentSize, 0)
    // The file a link names: its size, not the link's, says whether it is too large.
    let attributes = try? FileManager.default.attributesOfItem(
      atPath: url.resolvingSymlinksInPath().path)
    if attributes?[.type] as? FileAttributeType == .typeRegular,
      let size = (attributes?[.size] as? NSNumber)?.intValue, size > limit
    {
      throw HARError(
        .tooLarge,
        reason: "\(url.path) is \(size) bytes, over the limit of \(limit) "
          + "(HAR.Limits.maximumDocumentSize)")
    }
    let data: Data
    do {
      let handle = try FileHandle(forReadingFrom: url)
      defer { try? handle.close() }
      data = try handle.read(upToCount: min(limit, Int.max - 1) + 1) ?? Data()
    } catch {
      throw HARError(
        .unreadable, reason: "\(url.path) cannot be read (\(error.localizedDescription))")
    }
    guard data.count <= limit else {
      throw HARError(
        .tooLarge,
        reason: "\(url.path) is over the limit of \(limit) bytes (HAR.Limits.maximumDocumentSize)")
    }
    try self.init(data: data, limits: limits)
  }
}
