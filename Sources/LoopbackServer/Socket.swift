import Foundation

// The C library with the POSIX socket calls, per platform.
#if canImport(Glibc)
  import Glibc  // Linux with glibc (Debian, Ubuntu, Fedora, Amazon Linux): what CI builds.
#elseif canImport(Musl)
  import Musl  // Linux with musl (the static Linux SDK, Alpine).
#elseif canImport(Android)
  import Android  // Android (Bionic).
#elseif canImport(Darwin)
  import Darwin  // macOS, iOS, tvOS, watchOS, visionOS.
#else
  #error("LoopbackServer needs POSIX sockets: import this platform's C library above.")
#endif

/// Thin wrappers over the POSIX socket calls the loopback server needs, the same on Linux and
/// Apple platforms.
enum Socket {
  /// An error from a socket call, with the call's name and `errno`.
  struct Failure: Error, CustomStringConvertible {
    var call: String
    var code: Int32

    var description: String { "\(call) failed: \(String(cString: strerror(code))) (errno \(code))" }
  }

  /// A TCP socket listening on 127.0.0.1 at `port` (0 for any free port).
  static func makeListener(port: UInt16 = 0, backlog: Int32 = 128) throws -> (
    fd: Int32, port: UInt16
  ) {
    let (fd, bound) = try makeBound(port: port)
    guard listen(fd, backlog) == 0 else {
      let code = errno
      close(fd)
      throw Failure(call: "listen", code: code)
    }
    return (fd, bound)
  }

  /// A file's device and inode: which file a path named when it was looked at.
  struct FileIdentity: Equatable, Sendable {
    var device: UInt64
    var inode: UInt64
  }

  /// The identity of the socket file at `path`; `nil` when there is none, or something else.
  static func identity(ofSocketAt path: String) -> FileIdentity? {
    var info = stat()
    guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK else { return nil }
    return FileIdentity(
      device: UInt64(truncatingIfNeeded: info.st_dev),
      inode: UInt64(truncatingIfNeeded: info.st_ino))
  }

  /// Remove the socket file at `path` only if it is still the one made (`made`): a file that
  /// took its place since (moved there, or made after it was removed) is someone else's.
  static func removeSocketFile(at path: String, made: FileIdentity?) {
    guard let made, identity(ofSocketAt: path) == made else { return }
    unlink(path)
  }

  /// A Unix domain socket listening at `path`, which must not exist yet: the socket file is
  /// created here, and is the caller's to remove (``removeSocketFile(at:made:)``, given the
  /// identity returned).
  static func makeUnixListener(path: String, backlog: Int32 = 128) throws -> (
    fd: Int32, file: FileIdentity?
  ) {
    let address = try unixAddress(path, for: "bind")
    let fd = try makeUnix()
    let bound = withUnixAddress(address) { bind(fd, $0, $1) }
    guard bound == 0, listen(fd, backlog) == 0 else {
      let code = errno
      close(fd)
      throw Failure(call: "bind", code: code)
    }
    return (fd, identity(ofSocketAt: path))
  }

  /// A TCP socket bound to 127.0.0.1 at `port` (0 for any free port) that does not listen:
  /// connections to it are refused, and no other socket can take the port while it is open.
  static func makeBound(port: UInt16 = 0) throws -> (fd: Int32, port: UInt16) {
    let fd = try makeTCP()
    var reuse: Int32 = 1
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
    let bound = withLoopbackAddress(port: port) { bind(fd, $0, $1) }
    guard bound == 0 else {
      let code = errno
      close(fd)
      throw Failure(call: "bind", code: code)
    }
    return (fd, try localPort(fd))
  }

  /// A new TCP socket that never raises SIGPIPE.
  static func makeTCP() throws -> Int32 {
    #if canImport(Glibc)
      // glibc: an enum case; close-on-exec from the start, so no fork in between inherits it.
      let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    #else
      let fd = socket(AF_INET, Int32(SOCK_STREAM), 0)  // musl, Bionic, Darwin: an integer macro
    #endif
    guard fd >= 0 else { throw Failure(call: "socket", code: errno) }
    closeOnExec(fd)
    noSigPipe(fd)
    return fd
  }

  /// A new Unix domain stream socket that never raises SIGPIPE.
  static func makeUnix() throws -> Int32 {
    #if canImport(Glibc)
      let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    #else
      let fd = socket(AF_UNIX, Int32(SOCK_STREAM), 0)
    #endif
    guard fd >= 0 else { throw Failure(call: "socket", code: errno) }
    closeOnExec(fd)
    noSigPipe(fd)
    return fd
  }

  /// The Unix domain address of `path`.
  /// - Throws: `ENAMETOOLONG`, named for `call`, when `path` is empty, holds a NUL byte or does
  ///   not fit in the address.
  static func unixAddress(_ path: String, for call: String) throws -> sockaddr_un {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    let capacity = MemoryLayout.size(ofValue: address.sun_path)
    guard !bytes.isEmpty, bytes.count < capacity, !bytes.contains(0) else {
      throw Failure(call: "\(call) (a socket path of \(bytes.count) bytes)", code: ENAMETOOLONG)
    }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      raw.copyBytes(from: bytes)
      raw[bytes.count] = 0
    }
    return address
  }

  /// `body`'s result, called with `address` and its length.
  static func withUnixAddress<Result>(
    _ address: sockaddr_un, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result
  ) -> Result {
    withUnsafePointer(to: address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        body($0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
  }

  /// `body`'s result, called with the address 127.0.0.1:`port` and its length.
  static func withLoopbackAddress<Result>(
    port: UInt16, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result
  ) -> Result {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        body($0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
  }

  /// The local port a socket is bound to.
  static func localPort(_ fd: Int32) throws -> UInt16 {
    var address = sockaddr_in()
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let result = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    guard result == 0 else { throw Failure(call: "getsockname", code: errno) }
    return UInt16(bigEndian: address.sin_port)
  }

  /// What ``wait(_:orStop:milliseconds:)`` saw.
  enum Readiness {
    /// The socket can be read (or its peer hung up).
    case readable
    /// The server stopped.
    case stopped
    /// Neither happened in time.
    case timedOut
  }

  /// Wait until `fd` is readable, the server stops, or `milliseconds` pass (-1: no limit),
  /// asleep the whole time.
  static func wait(_ fd: Int32, orStop stop: StopSignal, milliseconds: Int32) -> Readiness {
    if stop.isSignalled { return .stopped }
    var descriptors = [
      pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
      pollfd(fd: stop.readEnd, events: Int16(POLLIN), revents: 0),
    ]
    // Without a pipe, look at the stop at least every 50 ms.
    let limit = stop.readEnd >= 0 || (0...50).contains(milliseconds) ? milliseconds : 50
    let count: nfds_t = stop.readEnd >= 0 ? 2 : 1
    var ready = poll(&descriptors, count, limit)
    while ready < 0 && errno == EINTR {
      ready = poll(&descriptors, count, limit)
    }
    if stop.isSignalled || descriptors[1].revents != 0 { return .stopped }
    return ready > 0 ? .readable : .timedOut
  }

  /// Accept a connection, or `nil` when none is waiting.
  static func acceptConnection(_ listener: Int32) -> Int32? {
    // `accept4` (close-on-exec at once) is not in Swift's Glibc module: set the flag after.
    let fd = accept(listener, nil, nil)
    guard fd >= 0 else { return nil }
    closeOnExec(fd, always: true)
    noSigPipe(fd)
    return fd
  }

  /// Read up to `count` bytes; empty at end of stream or on error.
  ///
  /// A signal that interrupts the call (a child process ending, say) is not the end of the
  /// stream: the call is made again.
  static func receive(_ fd: Int32, count: Int = 64 * 1024) -> [UInt8] {
    var buffer = [UInt8](repeating: 0, count: count)
    var received = recv(fd, &buffer, count, 0)
    while received < 0 && errno == EINTR {
      received = recv(fd, &buffer, count, 0)
    }
    return received > 0 ? Array(buffer[0..<received]) : []
  }

  /// Whether the peer has closed its end: readable with nothing to read.
  static func peerClosed(_ fd: Int32) -> Bool {
    var byte: UInt8 = 0
    return recv(fd, &byte, 1, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT)) == 0
  }

  /// Write all of `bytes`; `false` when the peer has gone.
  static func sendAll(_ fd: Int32, _ bytes: some Collection<UInt8>) -> Bool {
    let array = Array(bytes)
    var offset = 0
    while offset < array.count {
      let sent = array[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, sendFlags) }
      if sent < 0 && errno == EINTR { continue }
      guard sent > 0 else { return false }
      offset += sent
    }
    return true
  }

  /// Close so that the peer sees a reset (RST) instead of an orderly end.
  static func reset(_ fd: Int32) {
    var option = linger(l_onoff: 1, l_linger: 0)
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
    close(fd)
  }

  /// Close a socket.
  static func release(_ fd: Int32) {
    close(fd)
  }

  /// Mark `fd` close-on-exec, so that a child the process starts with `fork`/`exec` or
  /// `posix_spawn` does not inherit the server's sockets (and keep a stopped server's port
  /// queueing connections). On glibc a new socket is made so (`SOCK_CLOEXEC`) and this does
  /// nothing unless `always`; elsewhere, and for an accepted socket, it sets `FD_CLOEXEC`.
  static func closeOnExec(_ fd: Int32, always: Bool = false) {
    #if canImport(Glibc)
      guard always else { return }
    #endif
    let flags = fcntl(fd, F_GETFD)
    if flags >= 0 { _ = fcntl(fd, F_SETFD, flags | FD_CLOEXEC) }
  }

  // A peer that has gone must not kill the process with SIGPIPE: Linux and Android ask per send
  // (MSG_NOSIGNAL); Darwin has no such flag and asks per socket (SO_NOSIGPIPE).
  #if os(Linux) || os(Android)
    static let sendFlags = Int32(MSG_NOSIGNAL)
    static func noSigPipe(_ fd: Int32) {}
  #else
    static let sendFlags: Int32 = 0
    static func noSigPipe(_ fd: Int32) {
      var on: Int32 = 1
      setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
    }
  #endif
}
