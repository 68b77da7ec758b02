import Foundation

/// The events of one call, posted to every listener of its client: numbers the call, stamps
/// each event with the time since the call began, redacts what it carries, counts attempts and
/// samples body progress. `nil` wherever the client has no listeners, so a call without them
/// does no work for events.
///
/// Middleware and transports reach it through ``RequestContext/events``.
package final class CallEventSink: Sendable {
  private let id: UInt64
  private let endpoint: String
  private let dispatchers: [EventDispatcher]
  private let stopwatch: Stopwatch
  private let redaction: Redaction
  private let state = Locked(State())

  private struct State {
    var attempts = 0
    var chunks = 0
    var bytes = 0
    var ended = false
  }

  /// Calls begun in this process, for their numbers.
  private static let calls = Locked<UInt64>(0)

  /// Begin a call's events with ``CallEvent/Kind/callStarted``.
  init(
    endpoint: String, dispatchers: [EventDispatcher], clock: any Clock<Duration>,
    redaction: Redaction
  ) {
    id = Self.calls.withLock {
      $0 += 1
      return $0
    }
    self.endpoint = endpoint
    self.dispatchers = dispatchers
    self.stopwatch = Stopwatch(clock)
    self.redaction = redaction
    post(.callStarted)
  }

  /// Post an event to every listener.
  package func post(_ kind: CallEvent.Kind) {
    let event = CallEvent(callID: id, endpoint: endpoint, elapsed: stopwatch.elapsed, kind: kind)
    for dispatcher in dispatchers {
      dispatcher.post(event)
    }
  }

  /// The request was built: posted redacted, without its body.
  func requestBuilt(_ request: HTTPRequest) {
    let redaction = redaction.merging(request.redaction)
    var shown = request
    shown.body = nil
    shown.bodyFile = nil
    shown.headers = redaction.redact(request.headers)
    shown.url = redaction.redactedURL(request.url)
    post(.requestBuilt(shown))
  }

  /// An attempt goes to the transport.
  func attemptStarted() {
    let number = state.withLock {
      $0.attempts += 1
      return $0.attempts
    }
    post(.attemptStarted(number: number))
  }

  /// A head arrived.
  func responseHead(_ response: HTTPResponse) {
    post(.responseHead(status: response.status, headers: redaction.redact(response.headers)))
  }

  /// A location, with its secrets hidden.
  package func redacted(_ location: URL) -> String {
    redaction.redact(location)
  }

  /// Text that may quote URLs (an error's description), with every URL in it redacted: each
  /// word with `://` in it, less the punctuation after it.
  package func redacted(text: String) -> String {
    text.split(separator: " ", omittingEmptySubsequences: false).map { word -> String in
      guard word.contains("://") else { return String(word) }
      let end = word.lastIndex(where: { !":,.;)".contains($0) }).map(word.index(after:))
      let url = word[..<(end ?? word.endIndex)]
      return redaction.redact(urlText: String(url)) + word[url.endIndex...]
    }
    .joined(separator: " ")
  }

  /// A chunk of a streamed body arrived: progress is posted every 16 chunks.
  func bodyChunk(_ count: Int) {
    let progress = state.withLock { state -> (Int, Int)? in
      state.chunks += 1
      state.bytes += count
      return state.chunks % 16 == 0 ? (state.bytes, state.chunks) : nil
    }
    if let (bytes, chunks) = progress {
      post(.bodyProgress(bytes: bytes, chunks: chunks))
    }
  }

  /// The call returned (a streamed call: its body ended, its progress posted first).
  func ended(_ response: HTTPResponse, streamed: Bool = false) {
    guard let progress = end() else { return }
    if streamed, progress.chunks % 16 != 0 {
      post(.bodyProgress(bytes: progress.bytes, chunks: progress.chunks))
    }
    post(.callEnded(status: response.status, metrics: response.metrics))
  }

  /// The call failed or was cancelled.
  func failed(_ error: any Error) {
    guard end() != nil else { return }
    if error is CancellationError || (error as? APIError)?.kind == .cancelled {
      post(.callCancelled)
    } else {
      let failure = error as? APIError ?? APIError(transportError: error, request: nil)
      post(.callFailed(error: CallFailure(failure)))
    }
  }

  /// Mark the call ended, once: its body progress so far, or `nil` when it had ended already.
  private func end() -> (bytes: Int, chunks: Int)? {
    state.withLock { state in
      guard !state.ended else { return nil }
      state.ended = true
      return (state.bytes, state.chunks)
    }
  }
}
