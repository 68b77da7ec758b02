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
