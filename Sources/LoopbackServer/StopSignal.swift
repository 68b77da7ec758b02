import Errand
import Foundation

/// How a server's threads learn that it stopped without waking up to ask: a pipe whose read end
/// they wait on beside their socket, written to once when the server stops. An idle server's
/// threads sleep in `poll` until a client or the stop arrives, so a test process holding many
/// servers spends no processor time on them.
///
/// The pipe is closed when the last thread holding this object lets go of it; nothing is read
/// from it, so once written it stays readable for every thread that waits on it.
final class StopSignal: Sendable {
  /// The end the server's threads wait on; -1 when no pipe could be made.
  let readEnd: Int32
  private let writeEnd: Int32
  private let signalled = Locked(false)

  init() {
    var ends: [Int32] = [-1, -1]
    if pipe(&ends) == 0 {
      for end in ends {
        _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
      }
    }
    readEnd = ends[0]
    writeEnd = ends[1]
  }

  deinit {
    if readEnd >= 0 { close(readEnd) }
    if writeEnd >= 0 { close(writeEnd) }
  }

  /// Whether the server has stopped.
  var isSignalled: Bool { signalled.withLock { $0 } }

  /// Mark the server stopped and wake every thread waiting on ``readEnd``; once only.
  func signal() {
    let first = signalled.withLock { signalled -> Bool in
      defer { signalled = true }
      return !signalled
    }
    guard first, writeEnd >= 0 else { return }
    var byte: UInt8 = 1
    _ = write(writeEnd, &byte, 1)
  }
}
