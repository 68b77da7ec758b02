#if os(Linux)
  import Foundation

  /// Runs one test of this test binary in a child process: for a probe that needs an environment
  /// of its own (`ProxyEnvironmentTests`) or a process of its own (`StalledReaderMemoryTests`
  /// measures the resident size of a process where nothing else runs).
  enum ChildTestProcess {
    /// This test binary, by its real path: `Process` is handed a plain file, not the
    /// `/proc/self/exe` link.
    static let executable =
      (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
      ?? "/proc/self/exe"

    /// One child starts at a time: Foundation's `Process.run()` crashed once (a bad read inside
    /// it) while two children were launched at the same moment beside the whole suite.
    private static let launching = NSLock()

    /// Run the tests `filter` names with `environment`; the child's exit status and everything it
    /// printed.
    static func run(filter: String, environment: [String: String]) async throws -> (Int32, String) {
      let output = FileManager.default.temporaryDirectory.appendingPathComponent(
        "errand-child-test-\(UUID().uuidString).log")
      try Data().write(to: output)
      defer { try? FileManager.default.removeItem(at: output) }
      let handle = try FileHandle(forWritingTo: output)
      defer { try? handle.close() }
      let process = Process()
      process.executableURL = URL(fileURLWithPath: executable)
      process.arguments = ["--testing-library", "swift-testing", "--filter", filter]
      process.environment = environment
      process.standardOutput = handle
      process.standardError = handle
      let status = try await withCheckedThrowingContinuation { continuation in
        process.terminationHandler = { process in
          continuation.resume(returning: process.terminationStatus)
        }
        do {
          try launching.withLock { try process.run() }
        } catch {
          continuation.resume(throwing: error)
        }
      }
      let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
      return (status, text)
    }
  }
#endif
