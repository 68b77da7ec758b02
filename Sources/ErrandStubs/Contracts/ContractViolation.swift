import Errand
import Foundation

/// A contract case that a transport did not honour: its name and the difference between what the
/// contract expects and what came back.
public struct ContractViolation: Error, CustomStringConvertible, LocalizedError {
  /// Expected and actual, as text.
  public struct Difference: Sendable, Equatable {
    /// What the contract expects.
    public var expected: String
    /// What the transport gave.
    public var actual: String
  }

  /// The case's name.
  public var caseName: String
  /// What differs.
  public var difference: Difference

  /// The case name, then a line diff: `-` lines expected, `+` lines actual, ` ` lines shared.
  public var description: String {
    "Contract case \"\(caseName)\" is not honoured:\n"
      + LineDiff.lines(difference.expected, difference.actual).joined(separator: "\n")
  }

  /// The same text as ``description``.
  public var errorDescription: String? { description }
}

/// A small line diff (longest common subsequence), enough for values and statuses.
enum LineDiff {
  static func lines(_ expected: String, _ actual: String) -> [String] {
    let old = expected.components(separatedBy: "\n")
    let new = actual.components(separatedBy: "\n")
    var table = Array(repeating: Array(repeating: 0, count: new.count + 1), count: old.count + 1)
    for i in stride(from: old.count - 1, through: 0, by: -1) {
      for j in stride(from: new.count - 1, through: 0, by: -1) {
        table[i][j] =
          old[i] == new[j] ? table[i + 1][j + 1] + 1 : max(table[i + 1][j], table[i][j + 1])
      }
    }
    var result: [String] = []
    var (i, j) = (0, 0)
    while i < old.count || j < new.count {
      if i < old.count, j < new.count, old[i] == new[j] {
        result.append("  \(old[i])")
        (i, j) = (i + 1, j + 1)
      } else if i < old.count, j == new.count || table[i + 1][j] >= table[i][j + 1] {
        result.append("- \(old[i])")
        i += 1
      } else {
        result.append("+ \(new[j])")
        j += 1
      }
    }
    return result
  }
}

/// How contract values and outcomes are written in messages.
enum Rendering {
  static func json(_ value: some Encodable) -> String {
    (try? JSONEncoder.sorted().encode(value)).map { String(decoding: $0, as: UTF8.self) }
      ?? "\(value)"
  }

  static func prettyJSON(_ value: some Encodable) -> String {
    (try? JSONEncoder.sorted(pretty: true).encode(value)).map {
      String(decoding: $0, as: UTF8.self)
    } ?? "\(value)"
  }

  static func text(_ body: Data) -> String {
    String(data: body, encoding: .utf8) ?? "<\(body.count) bytes>"
  }

  static func outcome(of error: any Error) -> String {
    guard let error = error as? APIError else { return "failed: \(error)" }
    if case .unacceptableStatus(let response) = error {
      return "status \(response.status)\nbody \(text(response.body))"
    }
    return "fails with \(error.kind.rawValue): \(error.localizedDescription)"
  }
}
