@_spi(Transports) import Errand
import Foundation

/// Carries a transport's answer from the task that asks the transport (on Swift's cooperative
/// pool) to the connection's thread that writes it to the socket: the head, then the body's
/// chunks as they arrive, then the end or the error. The thread sleeps on ``wake`` beside its
/// socket and the server's stop; the task waits, without a thread, while more than
/// ``budget`` bytes are queued for a client that reads slowly.
///
/// Once the connection is done with the answer (``close()``: the client left, the server stopped,
/// the answer was written), a streamed body is cancelled, so the transport stops producing it,
/// and the task's next step finds the relay closed and stops asking.
final class AnswerRelay: Sendable {
  /// One step of the answer.
  enum Part: Sendable {
    /// The head; `whole` holds the body when the transport had it all at once (its length is
    /// known), `nil` when chunks follow.
    case head(HTTPResponse, whole: Data?)
    /// The next piece of a body that streams.
    case chunk(Data)
    /// The body ended normally.
    case end
    /// The transport threw, before the head or during the body.
    case failed(any Error)
  }

  private struct State: Sendable {
    var parts: [Part] = []
    var queuedBytes = 0
    var closed = false
    /// The body being relayed, cancelled when the relay closes: a body that waits for ever (a
    /// stall) may not notice that its reader's task was cancelled.
    var body: HTTPBody?
    /// The task, waiting for the thread to take what is queued.
    var drained: CheckedContinuation<Void, Never>?
  }

  /// The most body bytes queued before the task waits for the thread to write them.
  static let budget = 1024 * 1024

  /// Written to whenever a part is queued.
  let wake = WakePipe()
  private let state = Locked(State())

  /// Ask `transport` for the answer to `request` and queue it part by part; returns when the
  /// answer has ended or the relay is closed.
  func produce(from transport: any Transport, for request: HTTPRequest) async {
    let response: HTTPResponse
    do {
      // A plain `Transport` streams only by wrapping its whole answer (`stream(_:)`'s default),
      // so it is asked with `send(_:)` and its answer goes out whole, with `Content-Length`.
      response = try await transport.send(
        request, as: Exchange(streams: transport is any ExchangeTransport))
    } catch {
      await push(.failed(error))
      return
    }
    guard let body = response.bodyStream else {
      await push(.head(response, whole: response.body))
      return
    }
    var head = response
    head.bodyStream = nil
    let open = state.withLock { state -> Bool in
      state.body = body
      return !state.closed
    }
    guard open, await push(.head(head, whole: nil)) else {
      body.cancel()
      return
    }
    do {
      for try await chunk in body {
        guard await push(.chunk(chunk)) else {
          body.cancel()
          return
        }
      }
      await push(.end)
    } catch {
      body.cancel()
      await push(.failed(error))
    }
  }

  /// Queue a part and wake the thread; wait while too much is queued. `false` once closed.
  @discardableResult
  private func push(_ part: Part) async -> Bool {
    let size: Int
    if case .chunk(let data) = part { size = data.count } else { size = 0 }
    let accepted = state.withLock { state -> Bool in
      guard !state.closed else { return false }
      state.parts.append(part)
      state.queuedBytes += size
      return true
    }
    guard accepted else { return false }
    wake.wake()
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let goOn = state.withLock { state -> Bool in
        if state.closed || state.queuedBytes <= Self.budget { return true }
        state.drained = continuation
        return false
      }
      if goOn { continuation.resume() }
    }
    return state.withLock { !$0.closed }
  }

  /// Everything queued since the last call, in order; lets a waiting task go on.
  func take() -> [Part] {
    wake.drain()
    let (parts, drained) = state.withLock { state -> ([Part], CheckedContinuation<Void, Never>?) in
      defer {
        state.parts = []
        state.queuedBytes = 0
        state.drained = nil
      }
      return (state.parts, state.drained)
    }
    drained?.resume()
    return parts
  }

  /// The connection is done with the answer: queue nothing more, and let a waiting task go on
  /// to find that out.
  func close() {
    let (drained, body) = state.withLock {
      state -> (CheckedContinuation<Void, Never>?, HTTPBody?) in
      state.closed = true
      state.parts = []
      defer {
        state.drained = nil
        state.body = nil
      }
      return (state.drained, state.body)
    }
    drained?.resume()
    body?.cancel()
  }
}
