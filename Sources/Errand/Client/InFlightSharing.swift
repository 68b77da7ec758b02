import Foundation

/// Identical buffered `GET` and `HEAD` requests in flight at once share one exchange
/// (``APIClient/Configuration/sharesInFlightRequests``): the first runs it, in a task of its
/// own; the others wait for its answer, each within its own deadline; each gets its own copy. A
/// caller that leaves (cancelled, or past its deadline) leaves the others waiting; the exchange
/// is cancelled when the last one leaves. Once it has ended, the next identical request runs a
/// new exchange.
final class InFlightSharing: Sendable {
  private struct Shared {
    let token: UInt64
    /// Its callers' priority and listeners.
    let callers: SharedCallers
    /// The exchange, once started.
    var task: Task<Void, Never>?
    /// Who waits for its answer, by number.
    var waiters: [UInt64: CheckedContinuation<HTTPResponse, any Error>] = [:]
  }

  private struct State {
    var next: UInt64 = 0
    var shared: [String: Shared] = [:]
  }

  private let state = Locked(State())

  /// Headers that differ from call to call and say nothing of the answer: left out of the key.
  static let perCallHeaders: Set<String> = ["traceparent", "tracestate", "x-request-id"]

  /// What identifies a request whose exchange may be shared: its method, URL, every header that
  /// may change the answer (credentials included, so that no caller gets an answer meant for
  /// other credentials), what its redaction hides, and its size limit; `nil` for a request that
  /// is never shared (a body, a method other than `GET` or `HEAD`).
  static func key(for request: HTTPRequest) -> String? {
    guard ["GET", "HEAD"].contains(request.method.rawValue), request.body == nil,
      request.bodyFile == nil
    else { return nil }
    let headers = request.headers.fields
      .filter { !perCallHeaders.contains($0.name.lowercased()) }
      .map { "\($0.name.lowercased()): \($0.value)" }
      .sorted()
    // And what the request's redaction hides: every caller's events and errors show the shared
    // answer as its own redaction would, so callers that name other secrets do not share.
    let redaction = request.redaction
    let hidden = [redaction.headers, redaction.queryParameters, redaction.bodyFields].map {
      $0.sorted().joined(separator: ",")
    }
    return
      ([
        request.method.rawValue, request.url.absoluteString, "\(request.maximumResponseSize ?? -1)",
      ]
      + hidden + headers).joined(separator: "\n")
  }

  /// How many exchanges are shared now (for tests).
  var sharedCount: Int {
    state.withLock { $0.shared.count }
  }

  /// How many callers wait for shared exchanges now (for tests).
  var waitingCount: Int {
    state.withLock { $0.shared.values.reduce(0) { $0 + $1.waiters.count } }
  }

  /// The answer of the exchange in flight for `key`, or of a new one that `exchange` runs;
  /// within `deadline`, and until the calling task is cancelled (or its client cancels the call,
  /// `cancellation`), which ends this caller's wait at once. `callers`, the caller's priority
  /// and listeners, become the new exchange's, or join those of the one in flight (raising the
  /// priority it waits at, relaying its events).
  func share(
    _ key: String, callers: SharedCallers, deadline: RequestDeadline?,
    endedBy cancellation: CallCancellation? = nil,
    exchange: @escaping @Sendable () async throws -> HTTPResponse
  ) async throws -> HTTPResponse {
    let waiter = state.withLock { state in
      defer { state.next += 1 }
      return state.next
    }
    let wait: @Sendable () async throws -> HTTPResponse = { [self] in
      try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { resume in
          join(key, waiter: waiter, callers, resume, exchange: exchange)
        }
      } onCancel: {
        leave(key, waiter: waiter)
      }
    }
    if let deadline { return try await deadline.race(endedBy: cancellation, wait) }
    guard cancellation != nil else { return try await wait() }
    return try await withCancellation(endedBy: cancellation, wait)
  }

  /// Wait for `key`'s exchange, starting it when there is none.
  private func join(
    _ key: String, waiter: UInt64, _ callers: SharedCallers,
    _ resume: CheckedContinuation<HTTPResponse, any Error>,
    exchange: @escaping @Sendable () async throws -> HTTPResponse
  ) {
    enum Joined {
      case cancelled
      case waits(SharedCallers)
      case starts(UInt64)
    }
    let joined = state.withLock { state -> Joined in
      guard !Task.isCancelled else { return .cancelled }
      if let shared = state.shared[key] {
        state.shared[key]?.waiters[waiter] = resume
        return .waits(shared.callers)
      }
      let token = state.next
      state.next += 1
      state.shared[key] = Shared(token: token, callers: callers, waiters: [waiter: resume])
      return .starts(token)
    }
    switch joined {
    case .cancelled:
      resume.resume(throwing: CancellationError())
    case .waits(let shared):
      shared.join(callers)
    case .starts(let token):
      let task = Task { [weak self] in
        let result: Result<HTTPResponse, any Error>
        do {
          result = .success(try await exchange())
        } catch {
          result = .failure(error)
        }
        self?.finish(key, token: token, with: result)
      }
      let stillWaited = state.withLock { state -> Bool in
        guard state.shared[key]?.token == token else { return false }
        state.shared[key]?.task = task
        return true
      }
      // Every caller left before it started.
      if !stillWaited { task.cancel() }
    }
  }

  /// A caller left (cancelled, or past its deadline): its wait ends at once; the last one to
  /// leave cancels the exchange.
  private func leave(_ key: String, waiter: UInt64) {
    let (resume, task) = state.withLock {
      state -> (CheckedContinuation<HTTPResponse, any Error>?, Task<Void, Never>?) in
      guard var shared = state.shared[key],
        let resume = shared.waiters.removeValue(forKey: waiter)
      else { return (nil, nil) }
      guard shared.waiters.isEmpty else {
        state.shared[key] = shared
        return (resume, nil)
      }
      state.shared[key] = nil
      return (resume, shared.task)
    }
    resume?.resume(throwing: CancellationError())
    task?.cancel()
  }

  /// Exchange `token` of `key` ended: every caller still waiting gets its answer, and the next
  /// identical request runs a new exchange.
  private func finish(_ key: String, token: UInt64, with result: Result<HTTPResponse, any Error>) {
    let waiters = state.withLock { state -> [CheckedContinuation<HTTPResponse, any Error>] in
      guard let shared = state.shared[key], shared.token == token else { return [] }
      state.shared[key] = nil
      return Array(shared.waiters.values)
    }
    for waiter in waiters { waiter.resume(with: result) }
  }
}
