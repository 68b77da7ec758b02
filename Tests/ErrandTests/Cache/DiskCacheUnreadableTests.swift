import ErrandTesting
import Foundation
import TestSupport
import Testing

@testable import Errand

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A file the store cannot read now is not a damaged one: under Data Protection a locked iPhone
/// makes the cache's files unreadable (a background launch), and the store must neither wipe
/// itself nor delete entries then. Here a file the process may not read stands in for it.
@Suite(.timeLimit(.minutes(3))) struct DiskCacheUnreadableTests {
  enum Unreadable: String, CaseIterable, CustomTestStringConvertible {
    /// The version marker.
    case marker
    /// The stored answer's file.
    case entry
    var testDescription: String { rawValue }
  }

  @Test(arguments: Unreadable.allCases)
  func anUnreadableFileIsLeftAloneAndReadLater(_ unreadable: Unreadable) async throws {
    try await DiskCacheFiles.withFolder { folder in
      _ = try await DiskCacheFiles.get(HTTPCache(memoryBudget: 0, directory: folder))
      let entry = try #require(DiskCacheFiles.entryFiles(under: folder).first)
      // Everything may be read and changed by anyone, except the one file.
      for item in DiskCacheFiles.items(under: folder) {
        let mode: mode_t = item.kind == .directory ? 0o777 : 0o666
        chmod(folder.appendingPathComponent(item.path).path, mode)
      }
      chmod(folder.path, 0o777)
      let locked = unreadable == .marker ? "VERSION" : entry.path
      chmod(folder.appendingPathComponent(locked).path, 0)
      let before = DiskCacheFiles.snapshot(folder)

      // The app starts (a background launch) and looks the answer up while the file is
      // unreadable. On this thread, as the store's queue would: the permission is the thread's.
      let request = HTTPRequest(method: .get, url: url("https://api.example.com/v1/dogs"))
      let found = try Self.withoutPermissionToRead {
        DiskCacheStore(directory: folder, budget: 1_000_000, storesAuthenticatedResponses: false)
          .lookupNow(request, clock: ContinuousClock())
      }
      #expect(found == nil)
      #expect(DiskCacheFiles.snapshot(folder) == before, "nothing was removed or rewritten")

      // Once the file can be read again (the device unlocked), it answers.
      chmod(folder.appendingPathComponent(locked).path, 0o600)
      let later = try await DiskCacheFiles.cached(HTTPCache(memoryBudget: 0, directory: folder))
      #expect(later?.body == Data("[\"Rex\"]".utf8))
    }
  }

  /// Run `body` on this thread as a user without the right to read a file with mode 0 (or
  /// another user's private files): as the process, when it is not root; as root, with the
  /// thread's file-system user set to `nobody` (Linux's `setfsuid`, which also drops the
  /// capabilities that override file permissions, for this thread only) until it returns.
  static func withoutPermissionToRead<T>(_ body: () -> T) throws -> T {
    guard geteuid() == 0 else { return body() }
    #if canImport(Glibc)
      typealias SetFileSystemUser = @convention(c) (UInt32) -> Int32
      let symbol = try #require(dlsym(dlopen(nil, RTLD_NOW), "setfsuid"))
      let setFileSystemUser = unsafeBitCast(symbol, to: SetFileSystemUser.self)
      _ = setFileSystemUser(65534)
      defer { _ = setFileSystemUser(0) }
      return body()
    #else
      // Tests run as root only in Linux containers.
      return body()
    #endif
  }
}
