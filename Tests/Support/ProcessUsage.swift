import Foundation

/// What this process uses now, read from `/proc` (Linux; 0 where unknown): for load tests that
/// bound it.
package enum ProcessUsage {
  /// How many files and sockets the process has open (`/proc/self/fd`).
  package static var descriptors: Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd"))?.count ?? 0
  }

  /// How many threads the process has (`/proc/self/task`).
  package static var threads: Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task"))?.count ?? 0
  }

  /// The process's resident memory, in KB (`VmRSS` in `/proc/self/status`).
  package static var residentKB: Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let rss = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
      .flatMap {
        Int($0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
      }
    return rss ?? 0
  }
}
