#if os(Linux)
  import CErrandCurl
  @_spi(Transports) import Errand
  import Foundation
  import FoundationNetworking

  /// One request on its way through libcurl: its easy handle, the response as it arrives, and
  /// whoever waits for it.
  ///
  /// `@unchecked Sendable` is safe: the properties under "loop thread" are touched only by the
  /// engine's thread (libcurl calls back on it, and it alone completes and cleans up transfers);
  /// the ones set in `init` are never changed; the continuation and the abandoned flag live in
  /// `Locked` values.
  final class CurlTransfer: @unchecked Sendable {
    /// The easy handle; valid until `cleanUp()`.
    let easy: UnsafeMutableRawPointer
    let url: URL
    /// Whether the caller reads the body as it arrives (it gets larger pieces) or collects it.
    let streams: Bool
    /// The most bytes the response body may have.
    let limit: Int?
    /// Where libcurl writes its own words about a failure: allocated here, freed in `cleanUp()`,
    /// after the handle that writes into it.
    let errorBuffer: UnsafeMutablePointer<CChar>
    /// The request's header lines: owned here, freed in `cleanUp()` after the handle.
    var headerList: UnsafeMutableRawPointer?
    /// The addresses that replace what names resolve to (`ConnectionOptions.hostOverrides`):
    /// owned here, freed in `cleanUp()` after the handle (libcurl reads the list during the
    /// transfer).
    var resolveList: UnsafeMutableRawPointer?
    /// What a pin mismatch (`CURLE_SSL_PINNEDPUBKEYNOTMATCH`) of this transfer reports: its
    /// host and the keys pinned for it; `nil` when the host is not pinned.
    var pinned: PinMismatchError?
    /// The file an upload reads: opened here, closed in `cleanUp()` after the handle.
    var uploadFile: UnsafeMutablePointer<FILE>?
    /// Whether `cleanUp()` has run: it frees what the handle points at, so it runs once.
    private var cleanedUp = false
    /// When the transfer was set up, for its metrics.
    let startedAt = Date()
    /// Whether libcurl has said the transfer ended (loop thread).
    private(set) var isComplete = false

    // Loop thread.
    private var status = 0
    private var fields = HTTPHeaders()
    private var headComplete = false
    private var isRedirect = false
    /// Bytes of a redirect's body, which is dropped.
    private var dropped = 0
    private var writer: HTTPBody.Writer?
    /// When the head goes to the caller.
    private var handOver: HeadHandOver
    private var failure: (any Error)?
    /// Whether the transfer is paused until its reader catches up (set here, cleared by the
    /// engine before it resumes the transfer).
    var isPaused = false
    /// Whether the next piece of the body waits until the reader catches up (set when a write
    /// answers `pause`, cleared by the engine before it resumes the transfer).
    var pausesNext = false

    /// Who hears about the request body being sent (told only of progress past its last
    /// report), and the body's size.
    let uploadProgress: (@Sendable (TransferProgress) -> Void)?
    var uploadSize: Int?

    private let waiting: Waiting
    private let abandoned = Locked(false)
    /// Asks the engine to remove this transfer (its reader went away).
    private let stop: @Sendable (CurlTransfer) -> Void
    /// Asks the engine to resume this paused transfer (its reader caught up).
    private let proceed: @Sendable (CurlTransfer) -> Void

    /// Set up a handle for `request`; `waiting` is ended once: with the head (its body to follow
    /// in its `bodyStream`), with a redirect's head once its body is dropped, or with the failure.
    init(
      _ request: HTTPRequest, handle: UnsafeMutableRawPointer?, streams: Bool,
      certificateAuthorities: String? = nil, connection: ConnectionOptions? = nil,
      trust: LoadedTrust? = nil, reportOnlyPins: Bool = true,
      uploadProgress: (@Sendable (TransferProgress) -> Void)? = nil,
      waiting: Waiting,
      stop: @escaping @Sendable (CurlTransfer) -> Void,
      proceed: @escaping @Sendable (CurlTransfer) -> Void
    ) throws {
      self.stop = stop
      self.proceed = proceed
      self.uploadProgress = uploadProgress
      guard let easy = handle else { throw URLError(.unknown) }
      self.easy = easy
      self.url = request.url
      self.streams = streams
      self.handOver = HeadHandOver(streams: streams)
      self.limit = request.maximumResponseSize
      self.waiting = waiting
      errorBuffer = .allocate(capacity: curlErrorSize)
      errorBuffer.initialize(repeating: 0, count: curlErrorSize)
      do {
        try configure(for: request)
        if let certificateAuthorities {
          try setString(CurlOption.caInfo, certificateAuthorities)
          // Only that file: without this, libcurl would also trust its built-in CA directory.
          try check(
            errand_curl_easy_setopt_pointer(easy, CurlOption.caPath, nil), CurlOption.caPath)
        }
        if let connection {
          try configure(connection, for: request)
        }
        if let trust {
          try configure(trust, for: request, reportOnlyPins: reportOnlyPins)
        }
        if Self.multiplexes(request.url, connection?.httpVersion ?? .automatic) {
          // Wait for a connection being opened to the same host, to share it, rather than
          // open one more: HTTP/2 carries many transfers on one connection.
          try setLong(CurlOption.pipeWait, 1)
        }
      } catch {
        cleanUp()
        throw error
      }
    }

    /// Free the handle (or hand it back, reset, to `handingBack`), then what it pointed at. Loop
    /// thread (or before the handle was added).
    func cleanUp(handingBack: ((UnsafeMutableRawPointer) -> Void)? = nil) {
      guard !cleanedUp else {
        assertionFailure("a transfer's handle was cleaned up twice")
        return
      }
      cleanedUp = true
      if let handingBack {
        handingBack(easy)
      } else {
        errand_curl_easy_cleanup(easy)
      }
      errand_curl_slist_free_all(headerList)
      headerList = nil
      errand_curl_slist_free_all(resolveList)
      resolveList = nil
      if let uploadFile {
        fclose(uploadFile)
      }
      uploadFile = nil
      errorBuffer.deallocate()
    }

    // MARK: Waiting

    /// End the wait with `error` (a deadline, a cancellation) if it has not ended; the engine
    /// removes the handle.
    /// - Returns: Whether the caller was still waiting.
    @discardableResult
    func abandon(with error: any Error) -> Bool {
      abandoned.withLock { $0 = true }
      return waiting.resume(with: .failure(error))
    }

    var isAbandoned: Bool {
      abandoned.withLock { $0 }
    }

    // MARK: Loop thread: libcurl's callbacks and the end of the transfer

    /// One header line (status lines and the blank line that ends a head included), read as
    /// bytes: a head is ASCII, and this runs for every line of every response.
    func header(_ bytes: UnsafeRawBufferPointer) -> Int {
      guard !headComplete else { return bytes.count }  // trailers
      var end = bytes.count
      while end > 0, bytes[end - 1] == UInt8(ascii: "\r") || bytes[end - 1] == UInt8(ascii: "\n") {
        end -= 1
      }
      let line = UnsafeRawBufferPointer(rebasing: bytes[..<end])
      if line.isEmpty {
        if (100..<200).contains(status) && status != 101 {
          status = 0  // an interim answer: the real head follows
          return bytes.count
        }
        headComplete = true
        return headArrived() ? bytes.count : 0
      }
      if line.starts(with: "HTTP/".utf8) {
        // "HTTP/1.1 200 OK", "HTTP/2 200": the three digits after the first space.
        status = 0
        if let space = line.firstIndex(of: UInt8(ascii: " ")) {
          for byte in line[(space + 1)...].prefix(3) {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { break }
            status = status * 10 + Int(byte - UInt8(ascii: "0"))
          }
        }
        fields = HTTPHeaders()
        // Room for a usual head's fields (a server sends ten or so): one allocation, not five.
        fields.reserveCapacity(16)
        return bytes.count
      }
      if let colon = line.firstIndex(of: UInt8(ascii: ":")) {
        fields.add(
          CurlHeaderField.text(trimming: line[..<colon]),
          CurlHeaderField.text(trimming: line[(colon + 1)...]))
      }
      return bytes.count
    }

    /// The whole head is in: check it, and hand it out with its body to follow. A buffered
    /// call's head waits until its body has ended or backs up (one wake-up of the caller for a
    /// short answer instead of two), a redirect's until its dropped body has ended. Returns false
    /// to stop the transfer (with `failure` set).
    private func headArrived() -> Bool {
      let lengths = HTTPHeaders.announcedLengths(fields.values(for: "Content-Length"))
      if lengths.count > 1 {
        failure = URLError(.badServerResponse, userInfo: [NSURLErrorFailingURLErrorKey: url])
        return false
      }
      isRedirect = RedirectPolicy.location(toFollow: status, fields) != nil
      guard !isRedirect else { return true }
      let (stream, writer) = HTTPBody.makeStream(
        expectedLength: lengths.first.flatMap { Int($0) }, limit: limit
      ) { [weak self] in
        // The reader left, or the body stopped itself (over its limit): the transfer stops.
        guard let self else { return }
        self.stop(self)
      }
      self.writer = writer
      let head = HTTPResponse(status: status, headers: fields, url: url, bodyStream: stream)
      if var now = handOver.arrived(head) {
        now.metrics = metrics()
        waiting.resume(with: .success(now))
      }
      // A body announced longer than the limit has already ended with the size error, which a
      // held head's reader gets from it.
      guard !writer.isStopped else {
        handOverHead()
        return false
      }
      return true
    }

    /// Hand out a buffered call's head, if it is still held.
    private func handOverHead() {
      if var head = handOver.release() {
        // What is known now: everything, once the transfer has completed.
        head.metrics = metrics()
        waiting.resume(with: .success(head))
      }
    }

    /// A piece of the body.
    func write(_ bytes: UnsafeRawBufferPointer) -> Int {
      guard let writer else {
        // A redirect's body, dropped; a server that sends an endless one is cut off.
        dropped += bytes.count
        return dropped <= Self.largestDroppedBody ? bytes.count : 0
      }
      if pausesNext {
        // The reader is a memory budget behind: leave these bytes with libcurl (it hands them
        // over again when resumed) and stop reading from the socket until the reader catches up.
        if !isPaused {
          isPaused = true
          writer.whenDrained { [weak self] in
            guard let self else { return }
            self.proceed(self)
          }
        }
        return curlWriteFunctionPause
      }
      switch writer.write(Data(bytes)) {
      case .proceed:
        return bytes.count
      case .pause:
        // A buffered call's reader starts collecting (which resumes the transfer) once it has
        // the head.
        pausesNext = true
        handOverHead()
        return bytes.count
      case .stop:
        // Over the limit, the body has ended with the size error: a held head's reader gets it.
        handOverHead()
        return 0
      }
    }

    /// The most bytes of a redirect's body that are read (and dropped) before the transfer
    /// stops: 1 MiB.
    static let largestDroppedBody = 1024 * 1024

    /// The transfer ended with libcurl's `code`.
    func complete(code: Int32) {
      isComplete = true
      var error = failure
      if error == nil, code == curlPinnedKeyMismatch, let pinned {
        error = pinned
      }
      if error == nil, code != 0 {
        let message = String(cString: errorBuffer)
        error = CurlError.urlError(
          code: code,
          message: message.isEmpty ? String(cString: errand_curl_easy_strerror(code)) : message,
          url: url)
      }
      if error == nil, !headComplete {
        error = URLError(.badServerResponse, userInfo: [NSURLErrorFailingURLErrorKey: url])
      }
      if var error {
        // A network failure carries what was known of the transfer (APIError.metrics); the
        // response did not end.
        var known = metrics()
        known.responseEnd = nil
        error = known.attached(to: error)
        // The body first: a held head's body must end before the head is dropped, or dropping
        // it would cancel the transfer (and answer the caller) before the error is told.
        writer?.finish(throwing: error)
        waiting.resume(with: .failure(error))
        handOver.close()
        return
      }
      if let writer {
        // The reader gets the whole transfer's metrics at the end (HTTPBody.metrics).
        writer.finish(metrics: metrics())
        handOverHead()
        return
      }
      // A redirect, its body dropped.
      var redirect = HTTPResponse(status: status, headers: fields, url: url)
      redirect.metrics = metrics()
      waiting.resume(with: .success(redirect))
    }

    /// Removed before it ended (cancelled, timed out, or its reader left).
    func stopped() {
      let error = CancellationError()
      writer?.finish(throwing: error)
      waiting.resume(with: .failure(error))
      handOver.close()
    }
  }
#endif
