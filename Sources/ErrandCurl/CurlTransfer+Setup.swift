#if os(Linux)
  import CErrandCurl
  @_spi(Transports) import Errand
  import Foundation
  import FoundationNetworking

  /// Setting a transfer up: every libcurl option a request needs, each result checked, and the
  /// callbacks libcurl calls back.
  extension CurlTransfer {
    /// Set every option the request needs on the handle, checking each.
    func configure(for request: HTTPRequest) throws {
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
        request.timeout.map {
          RequestDeadline.backstopSeconds(for: $0, enforcedByTransport: true)
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

    func check(_ code: Int32, _ option: Int32) throws {
      try Self.check(code, option)
    }

    func setLong(_ option: Int32, _ value: Int) throws {
      try check(errand_curl_easy_setopt_long(easy, option, value), option)
    }

    func setString(_ option: Int32, _ value: String) throws {
      try check(errand_curl_easy_setopt_pointer(easy, option, value), option)
    }

    func setPointer(_ option: Int32, _ value: UnsafeRawPointer?) throws {
      try check(errand_curl_easy_setopt_pointer(easy, option, value), option)
    }

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
