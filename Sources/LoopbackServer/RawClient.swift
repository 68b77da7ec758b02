import Errand
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Android)
  import Android
#elseif canImport(Darwin)
  import Darwin
#endif
/// A client that sends bytes exactly as given, for tests of what the server does with requests
/// no HTTP client would send.
package enum RawClient {
  /// Connect to `127.0.0.1:port`, send `bytes`, close the sending side, and return everything
  /// the server sends until it closes the connection (or `timeout` passes).
  /// - Parameters:
  ///   - bytes: The bytes to send.
  ///   - port: The server's port.
  ///   - timeout: The longest to wait for the server to close.
  /// - Returns: What the server sent.
  /// - Throws: The socket call that failed, when no connection could be made.
  package static func exchange(
    _ bytes: [UInt8], port: UInt16, timeout: Duration = .seconds(60)
  ) throws -> [UInt8] {
    let fd = try Socket.makeTCP()
    defer { close(fd) }
    guard Socket.withLoopbackAddress(port: port, { connect(fd, $0, $1) }) == 0 else {
      throw Socket.Failure(call: "connect", code: errno)
    }
    _ = Socket.sendAll(fd, bytes)
    shutdown(fd, Int32(SHUT_WR))
    var received: [UInt8] = []
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
      guard Socket.waitReadable(fd, milliseconds: 50) else { continue }
      let more = Socket.receive(fd)
      if more.isEmpty { break }
      received += more
    }
    return received
  }
}

/// A connection that sends bytes exactly as given and keeps its sending side open, for tests
/// that hold connections (a slow client, one that never reads) or that must not look as if they
/// left (a server may take a half-closed connection for a client that gave up).
package final class RawConnection: Sendable {
  private let fd: Int32
  private let closed = Locked(false)

  /// Connect to `127.0.0.1:port`.
  /// - Parameters:
  ///   - port: The server's port.
  ///   - receiveBuffer: The size of the socket's receive buffer, set before it connects (a small
  ///     one makes a client that stops reading fill the server's buffers soon); the system's
  ///     default when `nil`.
  /// - Throws: The socket call that failed.
  package init(port: UInt16, receiveBuffer: Int32? = nil) throws {
    fd = try Socket.makeTCP()
    if var size = receiveBuffer {
      setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }
    guard Socket.withLoopbackAddress(port: port, { connect(fd, $0, $1) }) == 0 else {
      let code = errno
      Socket.release(fd)
      throw Socket.Failure(call: "connect", code: code)
    }
  }

  deinit {
    close()
  }

  /// Send `bytes`.
  /// - Parameter bytes: The bytes.
  /// - Returns: `false` when the server has gone.
  @discardableResult
  package func send(_ bytes: [UInt8]) -> Bool {
    Socket.sendAll(fd, bytes)
  }

  /// Everything the server sends until it closes the connection (or `timeout` passes).
  /// - Parameter timeout: The longest to wait for the server to close.
  /// - Returns: What the server sent.
  package func receiveAll(timeout: Duration = .seconds(60)) -> [UInt8] {
    var received: [UInt8] = []
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
      guard Socket.waitReadable(fd, milliseconds: 50) else { continue }
      let more = Socket.receive(fd)
      if more.isEmpty { break }
      received += more
    }
    return received
  }

  /// The first `count` bytes the server sends, or more (what the reads that reach `count`
  /// return), waiting for them; fewer when it closes first or `timeout` passes.
  /// - Parameters:
  ///   - count: How many bytes to wait for.
  ///   - timeout: The longest to wait.
  /// - Returns: The bytes.
  package func receive(atLeast count: Int, timeout: Duration = .seconds(60)) -> [UInt8] {
    var received: [UInt8] = []
    let deadline = ContinuousClock.now + timeout
    while received.count < count, ContinuousClock.now < deadline {
      guard Socket.waitReadable(fd, milliseconds: 50) else { continue }
      let more = Socket.receive(fd)
      if more.isEmpty { break }
      received += more
    }
    return received
  }

  /// Close the connection (once).
  package func close() {
    let first = closed.withLock { closed -> Bool in
      defer { closed = true }
      return !closed
    }
    if first { Socket.release(fd) }
  }
}
