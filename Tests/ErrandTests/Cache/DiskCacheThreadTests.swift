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

/// The disk store's file I/O runs off Swift's cooperative thread pool: a disk that is slow (here,
/// another process's cache holding the folder's `LOCK`) holds none of the pool's few threads,
/// however many calls wait for it.
@Suite(.timeLimit(.minutes(3))) struct DiskCacheThreadTests {
  @Test func callsWaitingForASlowDiskHoldNoThreadOfThePool() async throws {
    try await DiskCacheFiles.withFolder { folder in
      _ = try await DiskCacheFiles.get(HTTPCache(memoryBudget: 0, directory: folder))
      // Another cache's operation holds the lock the folder's every operation takes.
      let lockFile = open(folder.appendingPathComponent("LOCK").path, O_RDWR)
      try #require(lockFile >= 0)
      #expect(flock(lockFile, LOCK_EX) == 0)
      let held = Locked(true)
      let release: @Sendable () -> Void = {
        held.withLock { holding in
          guard holding else { return }
          holding = false
          flock(lockFile, LOCK_UN)
          close(lockFile)
        }
      }
      // Should the lookups block the pool after all, the lock goes after 45 s (on a dispatch
      // timer, which needs no thread of the pool), so that the test fails instead of hanging.
      // Not a bound on how fast the check below runs: on a machine loaded to 25 a task waited
      // more than the 10 s this was once, and the test failed with the pool free.
      DispatchQueue.global().asyncAfter(deadline: .now() + 45, execute: release)

      // More lookups than the pool has threads, all waiting for the disk.
      let cache = HTTPCache(memoryBudget: 0, directory: folder)
      let request = HTTPRequest(method: .get, url: url("https://api.example.com/v1/dogs"))
      let lookups = (0..<ProcessInfo.processInfo.activeProcessorCount * 2 + 2).map { _ in
        Task { await cache.lookup(request, clock: ContinuousClock()) }
      }
      // The pool still runs other work while they wait.
      let ranWhileHeld = await Task { held.withLock { $0 } }.value
      #expect(ranWhileHeld, "a task waited for the disk lookups to give a thread back")
      release()
      for lookup in lookups {
        let found = await lookup.value
        #expect(found?.response.body == Data("[\"Rex\"]".utf8))
      }
    }
  }
}
