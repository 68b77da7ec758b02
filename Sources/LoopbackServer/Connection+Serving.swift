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
            part, answering: request, as: recorded, with: served, headSent: &headSent)
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

  /// Write one part of the answer to `recorded`: a body that streams goes out chunked, or, to
  /// an HTTP/1.0 client (which cannot read chunked encoding), as it is, ended by the close.
  private func write(
    _ part: AnswerRelay.Part, answering request: HTTPRequest, as recorded: RecordedRequest,
    with served: ServedTransport, headSent: inout Bool
  ) -> Step {
    let isHead = recorded.method == "HEAD"
    let chunked = recorded.version >= "HTTP/1.1"
    switch part {
    case .head(let response, let whole):
      let bodyAllowed =
        !isHead && response.status != 204 && response.status != 304
      let framing: ServedTransport.Framing
      if let whole {
        // RFC 9110, sections 8.6 and 15.4.5: no length for a 204, and none (the body a 200
        // would have is not known) for a 304.
        framing =
          response.status == 204 || response.status == 304 ? .none : .length(whole.count)
      } else {
        framing = bodyAllowed ? (chunked ? .chunked : .untilClose) : .none
      }
      switch served.head(of: response, framing: framing) {
      case .failure(let refused):
        let text = SocketFault.scrubbed(refused.reason, of: request)
        return perform(.answer(status: 500, text: text), bodyless: isHead)
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
      guard chunked else { return Socket.sendAll(fd, data, orStop: stop) ? .next : .done }
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
      if chunked {
        _ = Socket.sendAll(fd, Array("0\r\n\r\n".utf8), orStop: stop)
      }
      return .done
    case .failed(let error):
      guard headSent else {
        return perform(SocketFault.beforeHead(error, answering: request), bodyless: isHead)
      }
      let fault = SocketFault.midBody(error)
      // A body that only the close ends would read as whole after an orderly close: reset.
      return perform(!chunked && fault == .close ? .reset : fault, bodyless: isHead)
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

  /// Do what a fault says on the socket; an answer to `HEAD` (`bodyless`) has its report's
  /// length but not the report (RFC 9110, section 9.3.2).
  private func perform(_ fault: SocketFault, bodyless: Bool = false) -> Step {
    switch fault {
    case .answer(let status, let text):
      let report = Array("\(text)\n".utf8)
      let body = bodyless ? [] : report
      let head =
        "HTTP/1.1 \(status) \(HTTPStatus.reasonPhrase(status))\r\n"
        + "Content-Type: text/plain; charset=utf-8\r\nContent-Length: \(report.count)\r\n"
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
