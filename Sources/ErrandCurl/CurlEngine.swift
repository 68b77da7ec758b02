#if os(Linux)
  import CErrandCurl
  import Errand
  import Foundation
  import FoundationNetworking

  /// One thread that owns a libcurl multi handle and runs every transfer of a ``CurlTransport``.
  ///
  /// Swift tasks hand transfers over (and ask for them to be removed) through a locked list and
  /// `curl_multi_wakeup`; every other libcurl call happens on this thread, so no easy handle is
  /// ever touched by two threads at once.
  ///
  /// `@unchecked Sendable` is safe: `multi` and `active` are used only on the engine's thread
  /// (after `init` hands them over); what other threads touch is in `requests`, a `Locked`, and
  /// `curl_multi_wakeup` is documented as callable from any thread.
  final class CurlEngine: @unchecked Sendable {
    private let multi: UnsafeMutableRawPointer
    private var active: [UnsafeMutableRawPointer: CurlTransfer] = [:]

    private struct Requests {
      var added: [CurlTransfer] = []
      var removed: [CurlTransfer] = []
      var resumed: [CurlTransfer] = []
      var stopping = false
      /// Whether anything was queued since the thread last took the requests.
      var pending = false
      /// Whether the thread is about to wait, or waits, in `curl_multi_poll`: only then does a
      /// new request need `curl_multi_wakeup` (a system call) to be seen.
      var waits = false

      /// Queue `request`; true when the thread must be woken to see it.
      mutating func queue(_ request: (inout Requests) -> Void) -> Bool {
        request(&self)
        pending = true
        defer { waits = false }
        return waits
      }
    }

    private let requests = Locked(Requests())

    /// Easy handles of transfers that ended normally, reset for the next ones: setting one up
    /// again costs less than creating one. Taken on callers' threads, given back on the engine's.
    private let idleHandles = Locked<[UnsafeMutableRawPointer]>([])
    private static let maximumIdleHandles = 64

    /// Start the engine's thread, or fail with why libcurl cannot be used.
    init(maximumConnectionsPerHost: Int) throws(CurlUnavailableError) {
      if let failure = errand_curl_load() {
        throw CurlUnavailableError(reason: String(cString: failure))
      }
      guard let multi = errand_curl_multi_init() else {
        throw CurlUnavailableError(reason: "curl_multi_init failed")
      }
      let limited = errand_curl_multi_setopt_long(
        multi, CurlMultiOption.maxHostConnections, maximumConnectionsPerHost)
      guard limited == 0 else {
        errand_curl_multi_cleanup(multi)
        throw CurlUnavailableError(
          reason: "libcurl refused CURLMOPT_MAX_HOST_CONNECTIONS (CURLMcode \(limited))")
      }
      // The idle connections kept for reuse. Left to itself, libcurl keeps four per transfer in
      // progress at the moment one ends: a client whose calls overlap little (each waits for
      // the app between two) then closes connections it opens again at once, paying a TLS
      // handshake for most calls. The limit errs high; idle ones still close after two minutes.
      let kept = errand_curl_multi_setopt_long(
        multi, CurlMultiOption.maxConnects, max(64, 4 * maximumConnectionsPerHost))
      guard kept == 0 else {
        errand_curl_multi_cleanup(multi)
        throw CurlUnavailableError(
          reason: "libcurl refused CURLMOPT_MAXCONNECTS (CURLMcode \(kept))")
      }
      self.multi = multi
      let thread = Thread { [self] in run() }
      thread.name = "errand.curl"
      thread.start()
    }

    deinit {
      for easy in idleHandles.withLock({ $0 }) {
        errand_curl_easy_cleanup(easy)
      }
    }

    /// Whether the libcurl loaded takes `CURL_HTTP_VERSION_…` `version` (HTTP/3 needs a build
    /// with QUIC).
    func supports(httpVersion version: Int) -> Bool {
      guard let easy = errand_curl_easy_init() else { return false }
      defer { errand_curl_easy_cleanup(easy) }
      return errand_curl_easy_setopt_long(easy, CurlOption.httpVersion, version) == 0
    }

    /// The CA bundle the libcurl loaded uses by default (`CURLINFO_CAINFO`, libcurl 7.84 and
    /// later); `nil` when it names none or cannot say.
    func defaultCertificateBundle() -> String? {
      guard let easy = errand_curl_easy_init() else { return nil }
      defer { errand_curl_easy_cleanup(easy) }
      var path: UnsafePointer<CChar>?
      guard errand_curl_easy_getinfo_string(easy, curlInfoDefaultCAInfo, &path) == 0, let path
      else { return nil }
      return String(cString: path)
    }

    /// An easy handle for a new transfer: an idle one, or a new one.
    func makeHandle() -> UnsafeMutableRawPointer? {
      idleHandles.withLock { $0.popLast() } ?? errand_curl_easy_init()
    }

    /// Take back the handle of a transfer that ended normally and left the multi handle: reset,
    /// it points at nothing of that transfer's any more. Kept for the next transfer, or freed.
    private func recycle(_ easy: UnsafeMutableRawPointer) {
      errand_curl_easy_reset(easy)
      let kept = idleHandles.withLock { idle in
        guard idle.count < Self.maximumIdleHandles else { return false }
        idle.append(easy)
        return true
      }
      if !kept {
        errand_curl_easy_cleanup(easy)
      }
    }

    /// Hand a transfer to the engine.
    func add(_ transfer: CurlTransfer) {
      if requests.withLock({ $0.queue { $0.added.append(transfer) } }) {
        _ = errand_curl_multi_wakeup(multi)
      }
    }

    /// Stop a transfer: its handle leaves the multi handle on the engine's thread; the caller
    /// never waits.
    func remove(_ transfer: CurlTransfer) {
      if requests.withLock({ $0.queue { $0.removed.append(transfer) } }) {
        _ = errand_curl_multi_wakeup(multi)
      }
    }

    /// Resume a transfer paused because its reader fell behind.
    func resume(_ transfer: CurlTransfer) {
      if requests.withLock({ $0.queue { $0.resumed.append(transfer) } }) {
        _ = errand_curl_multi_wakeup(multi)
      }
    }

    /// Take no new transfers, and end the thread once the running ones have ended.
    func shutDown() {
      if requests.withLock({ $0.queue { $0.stopping = true } }) {
        _ = errand_curl_multi_wakeup(multi)
      }
    }

    private func run() {
      while true {
        let requests = requests.withLock { requests in
          defer { requests = Requests(stopping: requests.stopping) }
          return requests
        }
        for transfer in requests.added {
          if transfer.isAbandoned || requests.stopping {
            transfer.stopped()
            transfer.cleanUp()
          } else if case let added = errand_curl_multi_add_handle(multi, transfer.easy), added != 0
          {
            // Never started: the caller hears so now, not at its deadline (or never).
            transfer.abandon(
              with: URLError(
                .unknown,
                userInfo: [
                  NSURLErrorFailingURLErrorKey: transfer.url,
                  NSLocalizedDescriptionKey: "curl_multi_add_handle failed (CURLMcode \(added))",
                ]))
            transfer.cleanUp()
          } else {
            active[transfer.easy] = transfer
          }
        }
        for transfer in requests.removed where active[transfer.easy] === transfer {
          // (A handle freed earlier may share its address with a newer one: hence the check.)
          finish(transfer.easy) { $0.stopped() }
        }
        for transfer in requests.resumed where active[transfer.easy] === transfer {
          // Cleared first: resuming can deliver the held bytes, and pause again, right here.
          transfer.isPaused = false
          transfer.pausesNext = false
          _ = errand_curl_easy_pause(transfer.easy, curlPauseContinue)
        }
        if requests.stopping && active.isEmpty {
          // The transport is gone and every transfer it started has ended (a body still being
          // read keeps its transfer, as URLSession's `finishTasksAndInvalidate` does).
          errand_curl_multi_cleanup(multi)
          return
        }
        var running: Int32 = 0
        _ = errand_curl_multi_perform(multi, &running)
        var easy: UnsafeMutableRawPointer?
        var code: Int32 = 0
        while errand_curl_multi_next_done(multi, &easy, &code) == 1 {
          if let easy {
            finish(easy, recycling: code == 0) { $0.complete(code: code) }
          }
        }
        // Wait for the sockets (at most a second) only when nothing was queued meanwhile; from
        // here on, whoever queues something wakes the thread.
        let waits = self.requests.withLock { requests in
          requests.waits = !requests.pending
          return requests.waits
        }
        if waits {
          _ = errand_curl_multi_poll(multi, 1000)
          self.requests.withLock { $0.waits = false }
        }
      }
    }

    /// Take a transfer out of the multi handle, tell it how it ended, and free its handle, or
    /// keep it for another transfer when `recycling` a buffered transfer that ended normally (a
    /// streamed one may hold a 256 KB receive buffer, which a reset does not shrink).
    private func finish(
      _ easy: UnsafeMutableRawPointer, recycling: Bool = false, _ outcome: (CurlTransfer) -> Void
    ) {
      guard let transfer = active.removeValue(forKey: easy) else { return }
      _ = errand_curl_multi_remove_handle(multi, easy)
      outcome(transfer)
      if recycling && !transfer.streams && !transfer.isPaused {
        transfer.cleanUp { self.recycle($0) }
      } else {
        transfer.cleanUp()
      }
    }
  }
#endif
