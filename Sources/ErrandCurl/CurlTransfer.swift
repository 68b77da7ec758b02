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
    let streams: Bool
    let limit: Int?
    /// Where libcurl writes its own words about a failure: allocated here, freed in `cleanUp()`,
    /// after the handle that writes into it.
    private let errorBuffer: UnsafeMutablePointer<CChar>
    /// The request's header lines: owned here, freed in `cleanUp()` after the handle.
    private var headerList: UnsafeMutableRawPointer?
    /// The file an upload reads: opened here, closed in `cleanUp()` after the handle.
    private var uploadFile: UnsafeMutablePointer<FILE>?
    /// Whether `cleanUp()` has run: it frees what the handle points at, so it runs once.
    private var cleanedUp = false

    // Loop thread.
    private var status = 0
    private var fields = HTTPHeaders()
    private var headComplete = false
    private var isRedirect = false
    private var received = 0
    private var body = Data()
    private var writer: HTTPBody.Writer?
    private var failure: (any Error)?
    /// Whether the transfer is paused until its reader catches up (set here, cleared by the
    /// engine before it resumes the transfer).
    var isPaused = false

    /// Who hears about the request body being sent (told only of progress past its last
    /// report), and the body's size.
    private let uploadProgress: (@Sendable (TransferProgress) -> Void)?
    private var uploadSize: Int?

    private let waiting: Waiting
    private let abandoned = Locked(false)
    /// Asks the engine to remove this transfer (its reader went away).
    private let stop: @Sendable (CurlTransfer) -> Void
    /// Asks the engine to resume this paused transfer (its reader caught up).
    private let proceed: @Sendable (CurlTransfer) -> Void

    /// Set up a handle for `request`; the continuation is resumed once, with the whole response,
    /// with its head when `streams`, or with the failure.
    init(
      _ request: HTTPRequest, handle: UnsafeMutableRawPointer?, streams: Bool,
      certificateAuthorities: String? = nil,
      uploadProgress: (@Sendable (TransferProgress) -> Void)? = nil,
      continuation: CheckedContinuation<HTTPResponse, any Error>,
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
      self.limit = request.maximumResponseSize
      self.waiting = Waiting(continuation)
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
      } catch {
        cleanUp()
        throw error
      }
    }

    private func configure(for request: HTTPRequest) throws {
      // libcurl copies every string option, so the Swift strings may go once set.
      try setString(CurlOption.url, request.url.absoluteString)
      try Self.restrictToHTTP(
        setString: { errand_curl_easy_setopt_pointer(easy, $0, $1) },
        setLong: { errand_curl_easy_setopt_long(easy, $0, $1) })
      try setLong(CurlOption.followLocation, 0)
      try setLong(CurlOption.noSignal, 1)
      try setLong(CurlOption.noProgress, 1)
      // As URLSession's request timeout: give up on a connection that does not open, or a
      // transfer that stalls, for the request's timeout in whole seconds plus one (60 when it
      // has none). The client enforces the exact deadline; this is a backstop that keeps a call
      // without one from waiting forever, and a second later so that it never wins that race.
      let idle =
        request.timeout.map { timeout in
          let seconds =
            Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
          return Int(min(max(1, seconds.rounded(.up)) + 1, Double(Int32.max / 1000)))
        } ?? 60
      try setLong(CurlOption.connectTimeoutMilliseconds, idle * 1000)
      try setLong(CurlOption.lowSpeedLimit, 1)
      try setLong(CurlOption.lowSpeedTime, idle)
      if streams {
        // Streamed bodies (downloads, feeds) in pieces of up to 256 KB rather than libcurl's
        // 16 KB: a sixteenth of the callbacks, and of the chunks a reader has to take. Buffered
        // calls keep the default, since every transfer holds a buffer of this size.
        try setLong(CurlOption.bufferSize, 256 * 1024)
      }
      // Every encoding libcurl can decode, as URLSession asks for; the limit counts decoded bytes.
      try setString(CurlOption.acceptEncoding, "")
      try setPointer(CurlOption.errorBuffer, errorBuffer)
      // `self`, unretained: libcurl passes it back to the callbacks below, which run only on the
      // engine's thread while this transfer is in the engine's `active` dictionary (a strong
      // reference); the handle is removed from the multi handle and freed before that ends.
      let this = Unmanaged.passUnretained(self).toOpaque()
      try setPointer(CurlOption.private, this)
      try setPointer(CurlOption.headerData, this)
      try setPointer(CurlOption.writeData, this)
      try check(
        errand_curl_easy_setopt_data_callback(easy, CurlOption.headerFunction, curlHeaderCallback),
        CurlOption.headerFunction)
      try check(
        errand_curl_easy_setopt_data_callback(easy, CurlOption.writeFunction, curlWriteCallback),
        CurlOption.writeFunction)

      switch request.method {
      case .get where request.body == nil && request.bodyFile == nil:
        try setLong(CurlOption.httpGet, 1)
      case .head:
        try setLong(CurlOption.noBody, 1)
      default:
        try setString(CurlOption.customRequest, request.method.rawValue)
      }
      if let file = request.bodyFile {
        let (handle, size) = try Self.openRegularFile(file)
        // The `FILE*` is read by libcurl's default read callback; closed in `cleanUp()`, after
        // the handle that reads it is freed.
        uploadFile = handle
        try setLong(CurlOption.upload, 1)
        try setPointer(CurlOption.readData, handle)
        try check(
          errand_curl_easy_setopt_offset(easy, CurlOption.inFileSizeLarge, Int64(size)),
          CurlOption.inFileSizeLarge)
        uploadSize = size
      } else if let body = request.body {
        uploadSize = body.count
        try check(
          errand_curl_easy_setopt_offset(easy, CurlOption.postFieldSizeLarge, Int64(body.count)),
          CurlOption.postFieldSizeLarge)
        // COPYPOSTFIELDS: libcurl copies the bytes during this call, so the pointer need only
        // live for the closure.
        let copied = body.withUnsafeBytes { bytes in
          let empty: StaticString = ""
          return errand_curl_easy_setopt_pointer(
            easy, CurlOption.copyPostFields,
            bytes.baseAddress ?? UnsafeRawPointer(empty.utf8Start))
        }
        try check(copied, CurlOption.copyPostFields)
      }

      if uploadProgress != nil, uploadSize != nil {
        // libcurl reports the bytes sent so far through this callback, on the engine's thread;
        // `this` as for the callbacks above.
        try setLong(CurlOption.noProgress, 0)
        try setPointer(CurlOption.transferInfoData, this)
        try check(
          errand_curl_easy_setopt_progress_callback(
            easy, CurlOption.transferInfoFunction, curlProgressCallback),
          CurlOption.transferInfoFunction)
      }

      var list: UnsafeMutableRawPointer?
      for field in request.headers {
        let line = field.value.isEmpty ? "\(field.name);" : "\(field.name): \(field.value)"
        guard let appended = errand_curl_slist_append(list, line) else {
          headerList = list
          throw URLError(.cannotCreateFile, userInfo: [NSURLErrorFailingURLErrorKey: url])
        }
        list = appended
      }
      // No `Expect: 100-continue` wait before a body, as URLSession sends none.
      list = errand_curl_slist_append(list, "Expect:") ?? list
      headerList = list
      try setPointer(CurlOption.httpHeader, list)
    }

    /// Restrict a handle to http and https: `CURLOPT_PROTOCOLS_STR` where libcurl knows it (7.85
    /// and later), else the `CURLOPT_PROTOCOLS` bitmask; a handle is never left unrestricted.
    static func restrictToHTTP(
      setString: (Int32, String) -> Int32, setLong: (Int32, Int) -> Int32
    ) throws {
      let named = setString(CurlOption.protocolsString, "http,https")
      if named == curlUnknownOption {
        try check(setLong(CurlOption.protocols, curlProtocolsHTTP), CurlOption.protocols)
      } else {
        try check(named, CurlOption.protocolsString)
      }
    }

    /// Throw ``CurlOptionRefused`` unless `code` is `CURLE_OK`.
    static func check(_ code: Int32, _ option: Int32) throws {
      guard code != 0 else { return }
      throw CurlOptionRefused(
        option: CurlOption.names[option] ?? "option \(option)", code: code,
        reason: String(cString: errand_curl_easy_strerror(code)))
    }

    private func check(_ code: Int32, _ option: Int32) throws {
      try Self.check(code, option)
    }

    private func setLong(_ option: Int32, _ value: Int) throws {
      try check(errand_curl_easy_setopt_long(easy, option, value), option)
    }

    private func setString(_ option: Int32, _ value: String) throws {
      try check(errand_curl_easy_setopt_pointer(easy, option, value), option)
    }

    private func setPointer(_ option: Int32, _ value: UnsafeRawPointer?) throws {
      try check(errand_curl_easy_setopt_pointer(easy, option, value), option)
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
        return bytes.count
      }
      if let colon = line.firstIndex(of: UInt8(ascii: ":")) {
        fields.add(
          Self.text(trimming: line[..<colon]), Self.text(trimming: line[(colon + 1)...]))
      }
      return bytes.count
    }

    /// The bytes as text, without the spaces and tabs around them.
    private static func text(trimming bytes: Slice<UnsafeRawBufferPointer>) -> String {
      func isSpace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
      }
      var slice = bytes[...]
      while let first = slice.first, isSpace(first) { slice = slice.dropFirst() }
      while let last = slice.last, isSpace(last) { slice = slice.dropLast() }
      return String(decoding: slice, as: UTF8.self)
    }

    /// The whole head is in: check it, and hand it out when streaming. Returns false to stop the
    /// transfer (with `failure` set).
    private func headArrived() -> Bool {
      let lengths = HTTPHeaders.announcedLengths(fields.values(for: "Content-Length"))
      if lengths.count > 1 {
        failure = URLError(.badServerResponse, userInfo: [NSURLErrorFailingURLErrorKey: url])
        return false
      }
      let expected = lengths.first.flatMap { Int($0) }
      if let limit, let expected, expected > limit {
        failure = URLError(.dataLengthExceedsMaximum, userInfo: [NSURLErrorFailingURLErrorKey: url])
        return false
      }
      isRedirect = [301, 302, 303, 307, 308].contains(status) && fields["Location"] != nil
      if streams && !isRedirect {
        let (stream, writer) = HTTPBody.makeStream(expectedLength: expected) { [weak self] in
          guard let self else { return }
          self.abandon(with: CancellationError())
          self.stop(self)
        }
        self.writer = writer
        waiting.resume(
          with: .success(
            HTTPResponse(status: status, headers: fields, url: url, bodyStream: stream)))
      }
      return true
    }

    /// libcurl's count of request body bytes sent (the observer drops counts it has seen).
    func sent(_ count: Int64, of total: Int64) {
      uploadProgress?(
        TransferProgress(
          completedBytes: Int(count), expectedBytes: total > 0 ? Int(total) : uploadSize))
    }

    /// A piece of the body.
    func write(_ bytes: UnsafeRawBufferPointer) -> Int {
      if let writer, writer.isBackedUp {
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
      received += bytes.count
      if let limit, received > limit {
        failure = URLError(.dataLengthExceedsMaximum, userInfo: [NSURLErrorFailingURLErrorKey: url])
        return 0
      }
      if isRedirect {
        return bytes.count
      }
      if let writer {
        writer.write(Data(bytes))
      } else {
        body.append(contentsOf: bytes)
      }
      return bytes.count
    }

    /// The transfer ended with libcurl's `code`.
    func complete(code: Int32) {
      var error = failure
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
      if let error {
        if !waiting.resume(with: .failure(error)) {
          writer?.finish(throwing: error)
        }
        return
      }
      if let writer {
        writer.finish()
        return
      }
      let response = HTTPResponse(status: status, headers: fields, body: body, url: url)
      waiting.resume(with: .success(streams ? response.streamingBody() : response))
    }

    /// Removed before it ended (cancelled, timed out, or its reader left).
    func stopped() {
      let error = CancellationError()
      if !waiting.resume(with: .failure(error)) {
        writer?.finish(throwing: error)
      }
    }
  }

  /// libcurl's header callback: `userdata` is the transfer, alive while its handle is in the
  /// engine's multi handle.
  private let curlHeaderCallback: errand_curl_data_callback = { buffer, size, count, userdata in
    guard let userdata else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
    return transfer.header(UnsafeRawBufferPointer(start: buffer, count: size * count))
  }

  /// libcurl's write callback, as the header callback.
  private let curlWriteCallback: errand_curl_data_callback = { buffer, size, count, userdata in
    guard let userdata else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
    return transfer.write(UnsafeRawBufferPointer(start: buffer, count: size * count))
  }

  /// libcurl's progress callback, as the header callback: only the upload counts are read.
  private let curlProgressCallback: errand_curl_progress_callback = {
    userdata, _, _, uploadTotal, uploaded in
    guard let userdata else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
    transfer.sent(uploaded, of: uploadTotal)
    return 0
  }
#endif

#if os(Linux)
  extension CurlTransfer {
    /// Open a body file for reading without ever blocking: `O_NONBLOCK`, so that a path swapped
    /// for a named pipe since the request was checked fails here instead of waiting for a writer,
    /// then `fstat` on what was opened, which must be a regular file.
    /// - Returns: The stream to read, and the file's size.
    static func openRegularFile(_ file: URL) throws -> (UnsafeMutablePointer<FILE>, Int) {
      let failure = URLError(.cannotOpenFile, userInfo: [NSURLErrorFailingURLErrorKey: file])
      let descriptor = open(file.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
      guard descriptor >= 0 else { throw failure }
      var info = stat()
      guard fstat(descriptor, &info) == 0, FileKind(mode: info.st_mode) == .regular,
        fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK) == 0,
        let handle = fdopen(descriptor, "rb")
      else {
        close(descriptor)
        throw failure
      }
      return (handle, Int(info.st_size))
    }
  }
#endif
