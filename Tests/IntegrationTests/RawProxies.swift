#if os(Linux)
  import Errand
  import Foundation
  import LoopbackServer
  import TestSupport

  /// A directory under `/tmp` for one test's socket files (short: a socket's path has at most
  /// 103 bytes), removed by ``remove()``.
  struct Scratch {
    let directory: String

    init() throws {
      directory = "/tmp/eh-\(UUID().uuidString.prefix(8))"
      try FileManager.default.createDirectory(
        atPath: directory, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String { "\(directory)/\(name)" }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }
  }

  /// A TCP socket on 127.0.0.1 that listens and never accepts: a connection completes (the
  /// kernel queues it) and nothing is ever read or answered. Closed when released.
  final class SilentListener: Sendable {
    let port: UInt16
    private let fd: Int32

    init() throws {
      (fd, port) = try RawSocket.listen()
    }

    deinit { close(fd) }
  }

  /// A SOCKS5 proxy (RFC 1928) that asks for a user name and password (RFC 1929), records them
  /// with the host and port asked for, and tunnels every connection to `127.0.0.1:<port>`,
  /// whatever was asked: for probes of what the server at the end of a tunnel sees.
  final class SOCKS5Proxy: Sendable {
    let port: UInt16
    private let fd: Int32
    private let seen = Locked<[String]>([])

    /// What each connection sent in the handshake: `user:password → host:port`.
    var handshakes: [String] { seen.withLock { $0 } }

    init(forwardingTo target: UInt16) throws {
      (fd, port) = try RawSocket.listen()
      let listener = fd
      let seen = seen
      Thread.detachNewThread {
        while true {
          let client = accept(listener, nil, nil)
          guard client >= 0 else { return }
          Thread.detachNewThread {
            Self.serve(client, target: target, seen: seen)
          }
        }
      }
    }

    /// Stop accepting; tunnels in progress end when either side closes.
    func stop() { shutdown(fd, Int32(SHUT_RDWR)) }

    deinit { close(fd) }

    private static func serve(_ client: Int32, target: UInt16, seen: Locked<[String]>) {
      defer { close(client) }
      // Greeting: version 5, the methods offered; answer: user name and password (2).
      guard let greeting = RawSocket.read(client, 2), greeting[0] == 5,
        RawSocket.read(client, Int(greeting[1])) != nil, RawSocket.write(client, [5, 2]),
        let version = RawSocket.read(client, 2), version[0] == 1,
        let user = RawSocket.read(client, Int(version[1])),
        let passwordLength = RawSocket.read(client, 1),
        let password = RawSocket.read(client, Int(passwordLength[0])),
        RawSocket.write(client, [1, 0]),
        let request = RawSocket.read(client, 4), request[0] == 5, request[1] == 1,
        request[3] == 3, let nameLength = RawSocket.read(client, 1),
        let name = RawSocket.read(client, Int(nameLength[0])),
        let portBytes = RawSocket.read(client, 2)
      else { return }
      let asked = Int(portBytes[0]) << 8 | Int(portBytes[1])
      seen.withLock {
        $0.append(
          "\(String(decoding: user, as: UTF8.self)):\(String(decoding: password, as: UTF8.self))"
            + " → \(String(decoding: name, as: UTF8.self)):\(asked)")
      }
      guard let upstream = try? RawSocket.connect(port: target) else { return }
      defer { close(upstream) }
      guard RawSocket.write(client, [5, 0, 0, 1, 127, 0, 0, 1, 0, 0]) else { return }
      let done = DispatchSemaphore(value: 0)
      Thread.detachNewThread {
        RawSocket.relay(from: upstream, to: client)
        done.signal()
      }
      RawSocket.relay(from: client, to: upstream)
      done.wait()
    }
  }

  /// Blocking socket calls for the raw servers above.
  enum RawSocket {
    struct Failure: Error { var call: String }

    static func address(port: UInt16) -> sockaddr_in {
      var address = sockaddr_in()
      address.sin_family = sa_family_t(AF_INET)
      address.sin_port = port.bigEndian
      address.sin_addr.s_addr = inet_addr("127.0.0.1")
      return address
    }

    /// A socket listening on 127.0.0.1 at a free port.
    static func listen() throws -> (Int32, UInt16) {
      let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
      guard fd >= 0 else { throw Failure(call: "socket") }
      var address = address(port: 0)
      var length = socklen_t(MemoryLayout<sockaddr_in>.size)
      let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          bind(fd, $0, length) == 0 && Glibc.listen(fd, 16) == 0
            && getsockname(fd, $0, &length) == 0
        }
      }
      guard bound else {
        close(fd)
        throw Failure(call: "bind")
      }
      return (fd, UInt16(bigEndian: address.sin_port))
    }

    static func connect(port: UInt16) throws -> Int32 {
      let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
      guard fd >= 0 else { throw Failure(call: "socket") }
      var address = address(port: port)
      let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
        }
      }
      guard connected else {
        close(fd)
        throw Failure(call: "connect")
      }
      return fd
    }

    /// Whether a connection to the Unix domain socket at `path` is accepted (queued) now.
    static func accepts(unixSocketAt path: String) -> Bool {
      let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
      guard fd >= 0 else { return false }
      defer { close(fd) }
      var address = sockaddr_un()
      address.sun_family = sa_family_t(AF_UNIX)
      let bytes = Array(path.utf8)
      guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
      withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes + [0]) }
      return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
        }
      }
    }

    /// Exactly `count` bytes, or `nil` when the peer closes first.
    static func read(_ fd: Int32, _ count: Int) -> [UInt8]? {
      var bytes = [UInt8](repeating: 0, count: count)
      var filled = 0
      while filled < count {
        let got = bytes.withUnsafeMutableBytes {
          recv(fd, $0.baseAddress! + filled, count - filled, 0)
        }
        guard got > 0 else { return nil }
        filled += got
      }
      return bytes
    }

    static func write(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
      var sent = 0
      while sent < bytes.count {
        let wrote = bytes.withUnsafeBytes {
          send(fd, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
        }
        guard wrote > 0 else { return false }
        sent += wrote
      }
      return true
    }

    /// Copy until `source` closes, then end the writing half of `destination`.
    static func relay(from source: Int32, to destination: Int32) {
      var buffer = [UInt8](repeating: 0, count: 16_384)
      while true {
        let got = buffer.withUnsafeMutableBytes { recv(source, $0.baseAddress, $0.count, 0) }
        guard got > 0, write(destination, Array(buffer[0..<got])) else { break }
      }
      shutdown(destination, Int32(SHUT_WR))
    }
  }
#endif
