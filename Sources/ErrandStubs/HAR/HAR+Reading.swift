import Errand
import Foundation

extension HAR {
  /// Read a HAR, leniently (see ``HAR``).
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
      document = try JSONValue.parse(data)
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

  /// Read a HAR file, leniently (see ``HAR``); at most one byte more than
  /// ``Limits/maximumDocumentSize`` is read from it, whatever its size.
  /// - Parameters:
  ///   - url: The file.
  ///   - limits: How large a document to read.
  /// - Throws: ``HARError``: `.unreadable` for a file that cannot be read, else what
  ///   ``init(data:limits:)`` throws.
  public init(contentsOf url: URL, limits: Limits = .default) throws(HARError) {
    let data: Data
    do {
      let handle = try FileHandle(forReadingFrom: url)
      defer { try? handle.close() }
      data =
        try handle.read(upToCount: max(min(limits.maximumDocumentSize, Int.max - 1), 0) + 1)
        ?? Data()
    } catch {
      throw HARError(
        .unreadable, reason: "\(url.path) cannot be read (\(error.localizedDescription))")
    }
    guard data.count <= limits.maximumDocumentSize else {
      throw HARError(
        .tooLarge,
        reason: "\(url.path) is over the limit of \(limits.maximumDocumentSize) bytes "
          + "(HAR.Limits.maximumDocumentSize)")
    }
    try self.init(data: data, limits: limits)
  }
}
