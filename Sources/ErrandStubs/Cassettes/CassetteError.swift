import Errand
import Foundation

/// Why a cassette could not be read, written or played.
public enum CassetteError: Error, Equatable, CustomStringConvertible, LocalizedError {
  /// There is no cassette at this path, and the mode does not allow recording one.
  case fileNotFound(path: String)
  /// The file is not valid JSON.
  case invalidJSON(path: String, line: Int, column: Int, reason: String)
  /// The file was written by a version of Errand this one cannot read.
  case unsupportedVersion(path: String, found: Int, supported: Int)
  /// The file is JSON but not a cassette.
  case malformed(path: String, reason: String)
  /// No recorded exchange matches the request (or every match has been played); `recorded`
  /// lists every exchange, its URL's secrets hidden, and the description the first 20.
  case noMatch(request: String, path: String, recorded: [String])
  /// The mode needs to record, but the cassette transport has no upstream transport.
  case noUpstream(path: String)
  /// The cassette could not be written.
  case unwritable(path: String, reason: String)

  /// What went wrong and which file.
  public var description: String {
    switch self {
    case .fileNotFound(let path):
      return "No cassette at \(path). Record one with mode .once or .all and an upstream transport."
    case .invalidJSON(let path, let line, let column, let reason):
      return "The cassette at \(path) is not valid JSON: line \(line), column \(column): \(reason)."
    case .unsupportedVersion(let path, let found, let supported):
      return "The cassette at \(path) has version \(found); this Errand reads version \(supported)."
    case .malformed(let path, let reason):
      return "The cassette at \(path) is not a cassette: \(reason)."
    case .noMatch(let request, let path, let recorded):
      let list =
        recorded.isEmpty
        ? " It holds no exchanges."
        : " It holds:\n" + Self.capped(recorded).map { "  \($0)" }.joined(separator: "\n")
      return "No unplayed exchange in the cassette at \(path) matches \(request).\(list)"
    case .noUpstream(let path):
      return "The cassette at \(path) needs to record, but no upstream transport was given."
    case .unwritable(let path, let reason):
      return "The cassette at \(path) could not be written: \(reason)."
    }
  }

  /// The first 20 of `lines`, then how many more there are: a HAR of thousands of entries
  /// keeps a message readable.
  static func capped(_ lines: [String]) -> [String] {
    let shown = 20
    guard lines.count > shown else { return lines }
    return Array(lines.prefix(shown)) + ["… and \(lines.count - shown) more"]
  }

  /// The same text as ``description``.
  public var errorDescription: String? { description }
}
