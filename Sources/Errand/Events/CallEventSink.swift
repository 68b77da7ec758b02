import Foundation

/// The events of one call, posted to every listener of its client: numbers the call, stamps
/// each event with the time since the call began, redacts what it carries, counts attempts and
/// samples body progress. `nil` wherever the client has no listeners, so a call without them
/// does no work for events.
///
/// Middleware and transports reach it through ``RequestContext/events``.
///
/// A shared exchange (``APIClient/Configuration/sharesInFlightRequests``) posts to a relay
/// instead (``init(relayingTo:)``): each of its callers' sinks posts the event as its own,
/// numbered, stamped and redacted as that call's.
package final class CallEventSink: Sendable {
  private let id: UInt64
  private let endpoint: String
  private let dispatchers: [EventDispatcher]
  private let stopwatch: Stopwatch
  private let redaction: Redaction
  private let state = Locked(State())
  /// The sinks a relay posts to, and what it posted so far; `nil` for a call's own sink.
  private let relayed: Locked<Relayed>?

  /// What a relay posts to each caller's sink.
  private enum Relayable {
    case post(CallEvent.Kind)
    case attemptStarted(HTTPRequest?)
    case responseHead(HTTPResponse, answering: HTTPRequest)
    case redirectFollowed(status: Int, location: URL)
    case redirectRefused(description: String)
  }

  private struct Relayed {
    var sinks: [CallEventSink] = []
    /// Posted so far, for a caller that joins later: at most ``relayHistory``.
    var history: [Relayable] = []
  }

  /// How many of a shared exchange's events a caller that joins late hears first.
  static let relayHistory = 64

  private struct State {
    var attempts = 0
    var chunks = 0
    var bytes = 0
    var ended = false
    /// The request of the latest attempt, as sent: the secrets a redirect's location may echo.
    var sent: HTTPRequest?
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
    relayed = nil
    post(.callStarted)
  }

  /// A relay for a shared exchange, posting first to `sink`, its first caller's.
  init(relayingTo sink: CallEventSink) {
    id = sink.id
    endpoint = sink.endpoint
    dispatchers = []
    stopwatch = sink.stopwatch
    redaction = sink.redaction
    relayed = Locked(Relayed(sinks: [sink]))
  }

  /// A relay posts to `sink` too from now on, after what it posted so far.
  func relay(to sink: CallEventSink) {
    relayed?.withLock { relayed in
      guard !relayed.sinks.contains(where: { $0 === sink }) else { return }
      relayed.sinks.append(sink)
      for event in relayed.history { sink.apply(event) }
    }
  }

  /// Post `event` to every sink of a relay (under its lock, so that a sink that joins hears
  /// every event once and in order).
  /// - Returns: Whether this is a relay.
  private func relaying(_ event: Relayable) -> Bool {
    guard let relayed else { return false }
    relayed.withLock { relayed in
      if relayed.history.count < Self.relayHistory { relayed.history.append(event) }
      for sink in relayed.sinks { sink.apply(event) }
    }
    return true
  }

  private func apply(_ event: Relayable) {
    switch event {
    case .post(let kind): post(kind)
    case .attemptStarted(let request): attemptStarted(sending: request)
    case .responseHead(let head, let request): responseHead(head, answering: request)
    case .redirectFollowed(let status, let location):
      redirectFollowed(status: status, location: location)
    case .redirectRefused(let description): redirectRefused(description: description)
    }
  }

  /// Post an event to every listener.
  package func post(_ kind: CallEvent.Kind) {
    if relaying(.post(kind)) { return }
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

  /// An attempt goes to the transport, sending `request`.
  func attemptStarted(sending request: HTTPRequest? = nil) {
    if relaying(.attemptStarted(request)) { return }
    let number = state.withLock {
      $0.attempts += 1
      $0.sent = request
      return $0.attempts
    }
    post(.attemptStarted(number: number))
  }

  /// A head arrived in answer to `request` (as sent): posted with sensitive headers hidden and
  /// every secret the request carried scrubbed from the others, wherever the server echoed it.
  func responseHead(_ response: HTTPResponse, answering request: HTTPRequest) {
    if relaying(
      .responseHead(
        HTTPResponse(status: response.status, headers: response.headers), answering: request))
    {
      return
    }
    let redaction = redaction.merging(request.redaction)
    post(
      .responseHead(
        status: response.status, headers: redaction.redact(response.headers, answering: request)))
  }

  /// The transport followed a redirect to `location` (posted with its secrets hidden, and every
  /// secret the attempt's request carried scrubbed from it, wherever the server echoed it).
  package func redirectFollowed(status: Int, location: URL) {
    if relaying(.redirectFollowed(status: status, location: location)) { return }
    post(.redirectFollowed(status: status, location: scrubbed(redacted(location))))
  }

  /// The transport refused a redirect, for the reason `description` says (posted with every URL
  /// in it redacted).
  package func redirectRefused(description: String) {
    if relaying(.redirectRefused(description: description)) { return }
    post(.redirectRefused(reason: scrubbed(redacted(text: description))))
  }

  /// A location, with its secrets hidden (those the attempt's request names too).
  package func redacted(_ location: URL) -> String {
    redaction.merging(state.withLock { $0.sent?.redaction } ?? redaction).redact(location)
  }

  /// `text` with every secret the attempt's request carried replaced by `<redacted>`.
  private func scrubbed(_ text: String) -> String {
    guard let sent = state.withLock({ $0.sent }) else { return text }
    let secrets = redaction.merging(sent.redaction).secretValues(in: sent)
    return Redaction.scrub(secrets, from: text)
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
