import Foundation

/// A pipe that wakes a thread asleep in `poll`, as often as needed: written to by whoever has
/// news for the thread (an answer's next part, a free connection slot), drained by the thread
/// before it looks at the news. Unlike ``StopSignal``, which is written once and stays readable,
/// it is drained each time, so it wakes its thread only when there is something new.
///
/// A byte written before the thread waits stays in the pipe, so no wake-up is lost; a wake while
/// the pipe is full is dropped, harmlessly, since the thread will wake for the bytes already there.
final class WakePipe: Sendable {
  /// The end the thread waits on; -1 when no pipe could be made.
  let readEnd: Int32
  private let writeEnd: Int32

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

  /// Wake the thread waiting on ``readEnd`` (or the next one to wait).
  func wake() {
    guard writeEnd >= 0 else { return }
    var byte: UInt8 = 1
    _ = write(writeEnd, &byte, 1)
  }

  /// Empty the pipe, so that the next wait sleeps until the next ``wake()``.
  func drain() {
    guard readEnd >= 0 else { return }
    var bytes = [UInt8](repeating: 0, count: 64)
    while read(readEnd, &bytes, bytes.count) > 0 {}
  }
}
