import Errand
import Foundation

/// A connection of a server that serves a transport: the request goes to the transport in a task,
/// and this thread writes the answer as it arrives while it watches the client and the server's
/// stop, so that a stalled answer ends when the client leaves or the server stops.
extension Connection {
  /// What to do after one part of the answer.
  private enum Step {
    /// Wait for the next part.
    case next
    /// The answer is done (written whole, or given up): close the connection.
    case done
    /// Send nothing more: wait for the client to leave or the server to stop.
    case stall
  }

  /// Answer `recorded` with the transport, then return for the connection to close.
  func serve(_ recorded: RecordedRequest, with served: ServedTransport) {
    let request: HTTPRequest
    switch served.request(from: recorded) {
    case .success(let converted): request = converted
    case .failure(let refused):
      refuse(refused.reason)
      lingeringClose()
      return
    }
    let relay = AnswerRelay()
    let transport = served.transport
    let task = Task { await relay.produce(from: transport, for: request) }
    defer {
      relay.close()
      task.cancel()
    }
    var headSent = false
    var stalled = false
    while true {
      switch Socket.wait(fd, orWake: relay.wake, orStop: stop) {
      case .stopped:
        return
      case .socket:
        // Bytes after the request (a pipelined or smuggled one) are read and dropped; nothing
        // to read is the client gone (closed, or reset).
        guard !Socket.receive(fd).isEmpty else {
          _ = disconnected()
          return
        }
      case .woken:
        for part in relay.take() where !stalled {
          switch write(
            part, answering: request, method: recorded.method, with: served,
            headSent: &headSent)
          {
          case .next: continue
          case .done:
            lingeringClose()
            return
          case .stall: stalled = true
          }
        }
      }
    }
  }

  /// Write one part of the answer.
  private func write(
    _ part: AnswerRelay.Part, answering request: HTTPRequest, method: String,
    with served: ServedTransport, headSent: inout Bool
  ) -> Step {
    switch part {
    case .head(let response, let whole):
      let bodyAllowed =
        method != "HEAD" && response.status != 204 && response.status != 304
      let framing: ServedTransport.Framing
      if let whole {
        framing = response.status == 204 ? .none : .length(whole.count)
      } else {
        framing = bodyAllowed ? .chunked : .none
      }
      switch served.head(of: response, framing: framing) {
      case .failure(let refused):
        let text = SocketFault.scrubbed(refused.reason, of: request)
        return perform(.answer(status: 500, text: text))
      case .success(let head):
        headSent = true
        let body = bodyAllowed ? (whole ?? Data()) : Data()
        // One write for a small answer (no small segment for Nagle to hold back); a large body
        // is not copied.
        let sent =
          body.count <= 64 * 1024
          ? Socket.sendAll(fd, Data(head.utf8) + body, orStop: stop)
          : Socket.sendAll(fd, Data(head.utf8), orStop: stop)
            && Socket.sendAll(fd, body, orStop: stop)
        guard sent else { return .done }
        return whole == nil && bodyAllowed ? .next : .done
      }
    case .chunk(let data):
      guard !data.isEmpty else { return .next }
      let size = Data("\(String(data.count, radix: 16))\r\n".utf8)
      let end = Data("\r\n".utf8)
      // One write for a small chunk (no small segments for Nagle to hold back); a large one
      // is not copied.
      let sent =
        data.count <= 64 * 1024
        ? Socket.sendAll(fd, size + data + end, orStop: stop)
        : Socket.sendAll(fd, size, orStop: stop) && Socket.sendAll(fd, data, orStop: stop)
          && Socket.sendAll(fd, end, orStop: stop)
      return sent ? .next : .done
    case .end:
      _ = Socket.sendAll(fd, Array("0\r\n\r\n".utf8), orStop: stop)
      return .done
    case .failed(let error):
      return perform(
        headSent
          ? SocketFault.midBody(error) : SocketFault.beforeHead(error, answering: request))
    }
  }

  /// Close the sending side, then read and drop what the client still sends until it closes
  /// (at most a few seconds, or until the server stops): closing with unread bytes would reset
  /// the connection, and a reset can take the answer with it before the client reads it.
  func lingeringClose() {
    guard !closed else { return }
    Socket.shutdownSending(fd)
    let deadline = ContinuousClock.now + .seconds(2)
    while ContinuousClock.now < deadline {
      let left = Int32(max(1, (deadline - ContinuousClock.now) / .milliseconds(1)))
      guard Socket.wait(fd, orStop: stop, milliseconds: left) == .readable,
        !Socket.receive(fd).isEmpty
      else { return }
    }
  }

  /// Do what a fault says on the socket.
  private func perform(_ fault: SocketFault) -> Step {
    switch fault {
    case .answer(let status, let text):
      let body = Array("\(text)\n".utf8)
      let head =
        "HTTP/1.1 \(status) \(HTTPStatus.reasonPhrase(status))\r\n"
        + "Content-Type: text/plain; charset=utf-8\r\nContent-Length: \(body.count)\r\n"
        + "X-Errand-Stub-Server: \(status == 501 ? "unmatched" : "failed")\r\n"
        + "Connection: close\r\n\r\n"
      _ = Socket.sendAll(fd, Array(head.utf8) + body, orStop: stop)
      return .done
    case .reset:
      resetConnection()
      return .done
    case .close:
      return .done
    case .stall:
      return .stall
    case .notHTTP:
      _ = Socket.sendAll(fd, Array("NOT HTTP\r\n\r\n".utf8), orStop: stop)
      return .done
    }
  }
}
