import Errand
import Foundation

/// One accepted connection: reads a request, records it and plays its script; reads the next
/// request on the same connection after a complete response whose script says
/// `Connection: keep-alive`. Closes its socket exactly once, however many paths notice the
/// client leaving: a second `close` would close whatever file or socket reused the number.
final class Connection {
  let fd: Int32
  /// Which connection this is, counting from 1 in the order they were accepted.
  let number: Int
  let state: Locked<LoopbackServer.State>
  let handler: @Sendable (RecordedRequest) -> ScriptedResponse
  /// Says when the server stopped, without polling.
  let stop: StopSignal
  /// The transport that answers instead of `handler`, for a server created with
  /// `init(serving:…)` (see `Connection+Serving.swift`).
  let served: ServedTransport?

  private(set) var closed = false

  init(
    fd: Int32, number: Int, state: Locked<LoopbackServer.State>, stop: StopSignal,
    served: ServedTransport? = nil,
    handler: @escaping @Sendable (RecordedRequest) -> ScriptedResponse
  ) {
    self.fd = fd
    self.number = number
    self.state = state
    self.stop = stop
    self.served = served
    self.handler = handler
  }

  /// The longest the server waits for a client to send its request: for its first byte, and
  /// from that byte for the whole request (head and body), however the client spaces its bytes.
  private static let readTimeout: Duration = .seconds(120)

  func run() {
    defer { release() }
    // What the client sent and the server has not read as a request yet.
    var buffer = [UInt8]()
    var continued = false
    // When the request being read must be whole: set at its first byte.
    var deadline: ContinuousClock.Instant?
    // Where the parse of the request being read stopped: each read is parsed from there, so a
    // request that arrives in many small reads costs time in proportion to its length.
    var progress = ParseProgress()
    while true {
      switch RequestParser.parse(buffer, connection: number, progress: &progress) {
      case .incomplete(let expectsContinue):
        if expectsContinue, !continued {
          continued = true
          _ = Socket.sendAll(fd, Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
        }
        guard let more = readMore(until: deadline ?? .now + Self.readTimeout) else { return }
        if buffer.isEmpty { deadline = .now + Self.readTimeout }
        buffer += more
      case .malformed(let reason):
        refuse(reason)
        // The rest of what the client sends is read and dropped (for two seconds at most, or
        // until it closes or the server stops): closing on unread bytes would reset the
        // connection, which can take the 400 with it (RFC 9112, section 9.6).
        lingeringClose()
        return
      case .complete(let request, let consumed):
        buffer.removeFirst(consumed)
        progress = ParseProgress()
        continued = false
        deadline = buffer.isEmpty ? nil : .now + Self.readTimeout
        state.change(\.waiters) { $0.requests.append(request) }
        if let served {
          // One answer per connection: bytes after the request are never read as another.
          serve(request, with: served)
          return
        }
        let script = handler(request)
        guard play(script, for: request) else { return }
        guard script.keepsConnectionOpen else { return }
      }
    }
  }

  /// Send the script; `true` when the socket is still open and should be closed normally.
  private func play(_ script: ScriptedResponse, for request: RecordedRequest) -> Bool {
    guard wait(script.delayBeforeHeaders) else { return false }
    if script.ending == .closeWithoutResponse {
      return true
    }
    if let raw = script.raw {
      return Socket.sendAll(fd, raw) || disconnected()
    }
    let hasBody =
      request.method != "HEAD" && !(100..<200).contains(script.status)
      && ![204, 304].contains(script.status)
    var head = "HTTP/1.1 \(script.status) \(HTTPStatus.reasonPhrase(script.status))\r\n"
    let names = Set(script.headers.map { $0.0.lowercased() })
    for (name, value) in script.headers {
      head += "\(name): \(value)\r\n"
    }
    if script.chunkSize != nil {
      if !names.contains("transfer-encoding") {
        head += "Transfer-Encoding: chunked\r\n"
      }
    } else if !names.contains("content-length") && ![204, 304].contains(script.status) {
      head += "Content-Length: \(script.body.count)\r\n"
    }
    if !names.contains("connection") {
      head += "Connection: close\r\n"
    }
    guard Socket.sendAll(fd, Array((head + "\r\n").utf8)) else { return disconnected() }
    guard hasBody else { return true }

    let limit: Int
    switch script.ending {
    case .closeAfterBodyBytes(let count), .resetAfterBodyBytes(let count):
      limit = min(count, script.body.count)
    case .complete, .closeWithoutResponse:
      limit = script.body.count
    }
    guard sendBody(script.body[..<limit], script: script) else { return disconnected() }

    switch script.ending {
    case .resetAfterBodyBytes:
      resetConnection()
      return false
    case .closeAfterBodyBytes:
      return true
    case .complete, .closeWithoutResponse:
      if script.chunkSize != nil {
        return Socket.sendAll(fd, Array("0\r\n\r\n".utf8)) || disconnected()
      }
      return true
    }
  }

  /// Send the body: whole, or in chunks with chunked framing; waits `delayMidBody` once half of
  /// it is sent and `chunkInterval` between chunks.
  private func sendBody(_ bytes: Data, script: ScriptedResponse) -> Bool {
    let half = bytes.startIndex + bytes.count / 2
    guard let chunkSize = script.chunkSize, chunkSize > 0 else {
      return Socket.sendAll(fd, bytes[..<half]) && wait(script.delayMidBody)
        && Socket.sendAll(fd, bytes[half...])
    }
    var lengths = script.chunkLengths ?? []
    var offset = bytes.startIndex
    var waitedMidBody = false
    while offset < bytes.endIndex {
      let length = lengths.isEmpty ? chunkSize : lengths.removeFirst()
      let end = offset + min(length, bytes.endIndex - offset)
      if !waitedMidBody, end > half {
        if offset > bytes.startIndex || half == bytes.startIndex {
          waitedMidBody = true
          guard wait(script.delayMidBody) else { return false }
        }
      }
      if offset > bytes.startIndex {
        guard wait(script.chunkInterval) else { return false }
      }
      guard end > offset else { continue }
      let frame =
        Data(String(end - offset, radix: 16).utf8) + Data("\r\n".utf8) + bytes[offset..<end]
        + Data("\r\n".utf8)
      guard Socket.sendAll(fd, frame) else { return false }
      offset = end
    }
    return true
  }

  /// Wait for `duration` while watching for the client to hang up; `false` when it did.
  private func wait(_ duration: Duration) -> Bool {
    let deadline = ContinuousClock.now + duration
    while ContinuousClock.now < deadline {
      switch Socket.wait(fd, orStop: stop, milliseconds: Self.milliseconds(until: deadline)) {
      case .stopped:
        return false
      case .readable:
        if Socket.peerClosed(fd) {
          return disconnected()
        }
        _ = Socket.receive(fd)
      case .timedOut:
        continue
      }
    }
    return !stop.isSignalled
  }

  /// Answer `400 Bad Request` with `reason`, noted in ``LoopbackServer/malformedRequests``.
  func refuse(_ reason: String) {
    state.change(\.waiters) { $0.malformedRequests.append(reason) }
    let body = Array("\(reason)\n".utf8)
    let head =
      "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\n"
      + "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
    _ = Socket.sendAll(fd, Array(head.utf8) + body, orStop: stop)
  }

  /// Note a client that left early (once) and close; always `false`.
  func disconnected() -> Bool {
    if !closed {
      state.change(\.waiters) { $0.earlyDisconnects.append(.now) }
    }
    release()
    return false
  }

  /// Reset the connection (RST), unless it is closed already.
  func resetConnection() {
    guard !closed else { return }
    closed = true
    Socket.reset(fd)
  }

  /// Close the socket, unless it is closed already.
  func release() {
    guard !closed else { return }
    closed = true
    Socket.release(fd)
  }

  // MARK: Reading

  /// The next bytes from the client, or `nil` at end of stream, at `deadline` or when stopped.
  private func readMore(until deadline: ContinuousClock.Instant) -> [UInt8]? {
    while ContinuousClock.now < deadline {
      switch Socket.wait(fd, orStop: stop, milliseconds: Self.milliseconds(until: deadline)) {
      case .stopped:
        return nil
      case .readable:
        let bytes = Socket.receive(fd)
        return bytes.isEmpty ? nil : bytes
      case .timedOut:
        continue
      }
    }
    return nil
  }

  /// The time left until `deadline` in whole milliseconds for `poll`: at least 1, at most a day.
  private static func milliseconds(until deadline: ContinuousClock.Instant) -> Int32 {
    let remaining = deadline - ContinuousClock.now
    guard remaining < .seconds(86_400) else { return 86_400_000 }
    return Int32(max(1, remaining / .milliseconds(1)))
  }
}
