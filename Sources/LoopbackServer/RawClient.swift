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
    #if canImport(Glibc)
      let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #else
      let fd = socket(AF_INET, Int32(SOCK_STREAM), 0)
    #endif
    guard fd >= 0 else { throw Socket.Failure(call: "socket", code: errno) }
    defer { close(fd) }
    Socket.noSigPipe(fd)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard connected == 0 else { throw Socket.Failure(call: "connect", code: errno) }
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
