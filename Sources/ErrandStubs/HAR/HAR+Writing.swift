import Errand
import Foundation

extension HAR {
  /// The archive as HAR 1.2 JSON, its secrets hidden first (``redacted(with:)``): indented by
  /// two spaces, keys sorted, dates in UTC with milliseconds, so that the same archive always
  /// gives the same bytes, and reading them back and writing again does too.
  /// - Parameter redaction: What is secret; `Redaction.default` by default. `Authorization`,
  ///   `Proxy-Authorization`, `Cookie`, `Set-Cookie` and cookie values are hidden whatever it
  ///   says.
  /// - Returns: The document, ending with a newline.
  /// - Throws: ``HARError`` (`.unwritable`) if the archive cannot be encoded.
  public func encoded(redaction: Redaction = .default) throws(HARError) -> Data {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    let compact: Data
    do {
      compact = try encoder.encode(redacted(with: redaction))
    } catch {
      throw HARError(.unwritable, reason: "it cannot be encoded (\(error))")
    }
    // Laid out by Errand's own writer rather than the encoder's, whose pretty form differs
    // between Foundations (and writes an empty list over three lines).
    guard let document = try? JSONValue.parse(compact) else { return compact }
    return Data((document.pretty + "\n").utf8)
  }

  /// Write the archive to a file, atomically, its secrets hidden (see ``encoded(redaction:)``).
  /// - Parameters:
  ///   - url: The file; its folder is created if need be.
  ///   - redaction: What is secret.
  /// - Throws: ``HARError`` (`.unwritable`) naming the file.
  public func write(to url: URL, redaction: Redaction = .default) throws(HARError) {
    let data = try encoded(redaction: redaction)
    do {
      try FileManager.default.createDirectory(
        at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
      try data.write(to: url, options: .atomic)
    } catch {
      throw HARError(
        .unwritable, reason: "\(url.path) cannot be written (\(error.localizedDescription))")
    }
  }
}
