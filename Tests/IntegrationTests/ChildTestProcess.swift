#if os(Linux)
  import Foundation
  import Glibc
  import TestSupport

  @testable import Errand

  /// Runs one test of this test binary in a child process: for a probe that needs an environment
  /// of its own (`ProxyEnvironmentTests`) or a process of its own (`StalledReaderMemoryTests`
  /// measures the resident size of a process where nothing else runs).
  enum ChildTestProcess {
    /// This test binary, by its real path: `Process` is handed a plain file, not the
    /// `/proc/self/exe` link.
    static let executable =
      (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
      ?? "/proc/self/exe"

    /// Run the tests `filter` names with `environment`; the child's exit status and everything it
    /// printed.
    ///
    /// Started with `posix_spawn`, not Foundation's `Process`: `Process.run()` on Linux reads past
    /// a buffer while it lists `/proc/self/fd` and crashes now and then, more often the more
    /// descriptors the process has open (swift-corelibs-foundation pull request 5472); it did, in
    /// 2 of about 20 whole-suite runs here. The child keeps only its standard streams, all sent to
    /// one file, as `Process` would leave it.
    static func run(filter: String, environment: [String: String]) async throws -> (Int32, String) {
      try await run(
        executable, arguments: ["--testing-library", "swift-testing", "--filter", filter],
        environment: environment)
    }

    /// A program built beside this test binary (an executable target of the package), by name.
    static func sibling(_ name: String) -> String {
      URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent(name)
        .path
    }

    /// Run `program` with `arguments` and `environment`; its exit status and everything it
    /// printed.
    static func run(_ program: String, arguments: [String], environment: [String: String])
      async throws -> (Int32, String)
    {
      let executable = program
      let output = FileManager.default.temporaryDirectory.appendingPathComponent(
        "errand-child-test-\(UUID().uuidString).log")
      try Data().write(to: output)
      defer { try? FileManager.default.removeItem(at: output) }
      let arguments = [executable] + arguments
      let variables = environment.map { "\($0.key)=\($0.value)" }
      var actions = posix_spawn_file_actions_t()
      posix_spawn_file_actions_init(&actions)
      defer { posix_spawn_file_actions_destroy(&actions) }
      posix_spawn_file_actions_addopen(&actions, 1, output.path, O_WRONLY | O_APPEND, 0)
      posix_spawn_file_actions_adddup2(&actions, 1, 2)
      posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
      closeInChild(from: 3, &actions)
      var pid: pid_t = 0
      let spawned = withCStrings(arguments) { argv in
        withCStrings(variables) { envp in
          posix_spawn(&pid, executable, &actions, nil, argv, envp)
        }
      }
      guard spawned == 0 else {
        throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EINVAL)
      }
      // Waited for on a thread of its own, not one of Swift's cooperative pool.
      let child = pid
      let status = Locked<Int32>(0)
      await onThread {
        var raw: Int32 = 0
        while waitpid(child, &raw, 0) == -1, errno == EINTR {}
        // WIFEXITED / WEXITSTATUS, and 128 + the signal for a child a signal ended.
        let exited = raw & 0x7f == 0
        status.withLock { $0 = exited ? (raw >> 8) & 0xff : 128 + (raw & 0x7f) }
      }
      let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
      return (status.withLock { $0 }, text)
    }

    /// Have the child close every descriptor from `first` up (the parent's sockets and files):
    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later; looked up, as the
    /// C module does not declare it), else a close for each descriptor open now.
    private static func closeInChild(
      from first: Int32, _ actions: inout posix_spawn_file_actions_t
    ) {
      typealias CloseFrom =
        @convention(c) (
          UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32
        ) -> Int32
      if let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") {
        _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, first)
        return
      }
      let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
      for descriptor in open.compactMap({ Int32($0) }) where descriptor >= first {
        posix_spawn_file_actions_addclose(&actions, descriptor)
      }
    }

    /// Run `body` with `strings` as a `NULL`-terminated array of C strings.
    private static func withCStrings<Result>(
      _ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> Result
    ) -> Result {
      let pointers = strings.map { strdup($0) } + [nil]
      defer { for pointer in pointers { free(pointer) } }
      return body(pointers)
    }
  }
#endif
