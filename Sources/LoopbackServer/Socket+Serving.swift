import Foundation

/// The waits and writes of a connection that serves a transport: it sleeps until the client, the
/// answer or the server's stop has news, and a write to a client that stopped reading ends when
/// the server stops instead of blocking its thread for ever.
extension Socket {
  /// What ``wait(_:orWake:orStop:)`` saw.
  enum Event: Equatable {
    /// The socket can be read, or its peer hung up.
    case socket
    /// The wake pipe was written to.
    case woken
    /// The server stopped.
    case stopped
  }

  /// Wait until `fd` is readable (not watched when negative), `wake` is written to, or the server
  /// stops, asleep the whole time. Without a pipe (none could be made) it looks again every
  /// 50 ms and says `woken`, so the caller looks for news.
  static func wait(_ fd: Int32, orWake wake: WakePipe, orStop stop: StopSignal) -> Event {
    while true {
      if stop.isSignalled { return .stopped }
      var descriptors = [
        pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
        pollfd(fd: wake.readEnd, events: Int16(POLLIN), revents: 0),
        pollfd(fd: stop.readEnd, events: Int16(POLLIN), revents: 0),
      ]
      let limit: Int32 = wake.readEnd >= 0 && stop.readEnd >= 0 ? -1 : 50
      let ready = poll(&descriptors, 3, limit)
      if ready < 0 && errno == EINTR { continue }
      if stop.isSignalled || descriptors[2].revents != 0 { return .stopped }
      if descriptors[1].revents != 0 || wake.readEnd < 0 { return .woken }
      if descriptors[0].revents != 0 { return .socket }
      if ready < 0 || limit >= 0 { return .woken }
    }
  }

  /// Write all of `bytes` without blocking past the server's stop; `false` when the peer has
  /// gone or the server stopped.
  static func sendAll(_ fd: Int32, _ bytes: Data, orStop stop: StopSignal) -> Bool {
    bytes.withUnsafeBytes { sendAll(fd, $0, orStop: stop) }
  }

  /// Write all of `bytes` without blocking past the server's stop; `false` when the peer has
  /// gone or the server stopped.
  static func sendAll(_ fd: Int32, _ bytes: [UInt8], orStop stop: StopSignal) -> Bool {
    bytes.withUnsafeBytes { sendAll(fd, $0, orStop: stop) }
  }

  /// Write all of `buffer`, waiting in `poll` for room (or the stop) when the socket is full.
  private static func sendAll(
    _ fd: Int32, _ buffer: UnsafeRawBufferPointer, orStop stop: StopSignal
  )
    -> Bool
  {
    var offset = 0
    while offset < buffer.count {
      if stop.isSignalled { return false }
      let sent = send(
        fd, buffer.baseAddress.map { $0 + offset }, buffer.count - offset,
        sendFlags | Int32(MSG_DONTWAIT))
      if sent > 0 {
        offset += sent
        continue
      }
      guard sent < 0 else { return false }
      switch errno {
      case EINTR:
        continue
      case EAGAIN, EWOULDBLOCK:
        var descriptors = [
          pollfd(fd: fd, events: Int16(POLLOUT), revents: 0),
          pollfd(fd: stop.readEnd, events: Int16(POLLIN), revents: 0),
        ]
        _ = poll(&descriptors, 2, stop.readEnd >= 0 ? -1 : 50)
      default:
        return false
      }
    }
    return true
  }

  /// Close the sending side only: the peer reads the end of the stream after everything sent.
  static func shutdownSending(_ fd: Int32) {
    _ = shutdown(fd, Int32(SHUT_WR))
  }
}
