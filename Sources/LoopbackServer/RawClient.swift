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
  /// the server sends until it closes the connection (or a read waits `timeout` in vain).
  /// - Parameters:
  ///   - bytes: The bytes to send.
  ///   - port: The server's port.
  ///   - timeout: The longest a read waits for the server to send or close (the socket's
  ///     receive timeout): a guard against a server that hangs.
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
    return receive(fd, atLeast: .max, timeout: timeout)
  }

  /// What `fd` receives until `count` bytes are in (or more: what the reads that reach it
  /// return) or the peer closes. Each read blocks, asleep, for at most `timeout` (`SO_RCVTIMEO`);
  /// one that times out, or fails, ends the reading as a close does.
  static func receive(_ fd: Int32, atLeast count: Int, timeout: Duration) -> [UInt8] {
    let (seconds, attoseconds) = timeout.components
    var limit = timeval()
    limit.tv_sec = time_t(max(seconds, 0))
    limit.tv_usec = suseconds_t(max(attoseconds, 0) / 1_000_000_000_000)
    if limit.tv_sec == 0 && limit.tv_usec == 0 { limit.tv_usec = 1 }  // 0 would wait forever
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    var received: [UInt8] = []
    while received.count < count {
      let more = Socket.receive(fd)
      if more.isEmpty { break }
      received += more
    }
    return received
  }
}

/// A connection, over TCP or a Unix domain socket, that sends bytes exactly as given and keeps
/// its sending side open, for tests that hold connections (a slow client, one that never reads)
/// or that must not look as if they left (a server may take a half-closed connection for a
/// client that gave up).
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

  /// Connect to the Unix domain socket at `path` (a server made with
  /// `LoopbackServer(unixSocketAt:serving:)`).
  /// - Parameter path: The socket file's path.
  /// - Throws: The socket call that failed; `ENAMETOOLONG` when `path` does not fit in a Unix
  ///   domain address.
  package init(unixSocketAt path: String) throws {
    let address = try Socket.unixAddress(path, for: "connect")
    fd = try Socket.makeUnix()
    guard Socket.withUnixAddress(address, { connect(fd, $0, $1) }) == 0 else {
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

  /// Everything the server sends until it closes the connection (or a read waits `timeout` in
  /// vain).
  /// - Parameter timeout: The longest a read waits for the server to send or close (the
  ///   socket's receive timeout): a guard against a server that hangs.
  /// - Returns: What the server sent.
  package func receiveAll(timeout: Duration = .seconds(60)) -> [UInt8] {
    RawClient.receive(fd, atLeast: .max, timeout: timeout)
  }

  /// The first `count` bytes the server sends, or more (what the reads that reach `count`
  /// return), waiting for them; fewer when it closes first or a read waits `timeout` in vain.
  /// - Parameters:
  ///   - count: How many bytes to wait for.
  ///   - timeout: The longest a read waits (the socket's receive timeout).
  /// - Returns: The bytes.
  package func receive(atLeast count: Int, timeout: Duration = .seconds(60)) -> [UInt8] {
    RawClient.receive(fd, atLeast: count, timeout: timeout)
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
