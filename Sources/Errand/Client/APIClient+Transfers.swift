import Foundation

extension APIClient {
  /// Send an endpoint's request as ``send(_:)`` does, reporting how much of the request body has
  /// been sent: for uploads, such as a ``RequestBody/file(_:contentType:)`` body.
  ///
  /// ```swift
  /// let receipt = try await client.send(upload) { progress in bar.value = progress.fractionCompleted ?? 0 }
  /// ```
  /// - Parameters:
  ///   - endpoint: What to call and how to read the answer.
  ///   - progress: Called as the body is sent, from a thread of the transport's, before the call
  ///     returns; reports never go back, none is dropped (a slow callback delays the call, and
  ///     with `CurlTransport` that transport's bookkeeping; ``URLSessionTransport`` calls it off
  ///     URLSession's queues), and the last one is the whole body. Transports that cannot tell
  ///     report nothing.
  /// - Returns: The decoded value.
  /// - Throws: ``APIError``, as ``send(_:)`` does.
  public nonisolated func send<Value>(
    _ endpoint: Endpoint<Value>, progress: @escaping @Sendable (TransferProgress) -> Void
  ) async throws -> Value {
    try await response(for: endpoint, as: Exchange(uploadProgress: forwardOnly(progress))).value
  }

  /// `observer`, told of no progress behind what it was last told, for the whole call: a body
  /// sent again (a retry, a `307` or `308` resent) starts from zero, and a caller's progress
  /// never goes back.
  private nonisolated func forwardOnly(
    _ observer: @escaping @Sendable (TransferProgress) -> Void
  ) -> @Sendable (TransferProgress) -> Void {
    let reported = Locked(-1)
    return { progress in
      let isNew = reported.withLock { reported in
        guard progress.completedBytes >= reported else { return false }
        reported = progress.completedBytes
        return true
      }
      if isNew {
        observer(progress)
      }
    }
  }

  /// Download an endpoint's response body to a file, as it arrives: memory stays flat whatever
  /// the size.
  ///
  /// The body is written next to `destination` under a hidden temporary name, then renamed over
  /// it in one step once it has all arrived. A failure or cancellation removes the partial file
  /// and leaves `destination` as it was.
  ///
  /// Only a new file or an existing regular file is ever written: a destination that is a folder
  /// (or names one, ending in `/`, `.` or `..`), a symbolic link to a folder, a device, a named
  /// pipe or a socket is refused with ``APIError/invalidRequest(_:)`` before the request is sent,
  /// and nothing is touched. A symbolic link to a file is replaced by the downloaded file; the file
  /// it pointed at is left as it was.
  ///
  /// ```swift
  /// let saved = try await client.download(Endpoint<Data>(path: "video", decoding: .data), to: destination)
  /// print(saved.value.path, saved.response.status)
  /// ```
  /// - Parameters:
  ///   - endpoint: What to call; its decoding is not used.
  ///   - destination: The file to write.
  ///   - progress: Called after each chunk is written, with the bytes so far and the announced
  ///     length (`Content-Length`, when the server sent one; it counts compressed bytes when the
  ///     server compresses); none is dropped, and the last report is the total.
  /// - Returns: The destination, with the response's head and the request.
  /// - Throws: ``APIError``, as ``stream(_:)`` does; a destination Errand will not write (see
  ///   above) or whose folder does not exist is ``APIError/invalidRequest(_:)``; a file that cannot
  ///   be written is ``APIError/transport(_:)`` with the file system's error.
  public nonisolated func download<Value>(
    _ endpoint: Endpoint<Value>, to destination: URL,
    progress: (@Sendable (TransferProgress) -> Void)? = nil
  ) async throws -> Response<URL> {
    let target = try DownloadDestination(destination)
    let stream = try await stream(endpoint)
    let files = FileManager.default
    let partial = target.partialFile()
    do {
      try target.createPartial(partial)
    } catch {
      // Nothing was created: whatever is at that name is not this download's to remove.
      stream.cancel()
      throw APIError(transportError: error, request: stream.request)
    }
    do {
      let handle = try FileHandle(forWritingTo: partial)
      defer { try? handle.close() }
      let expected = stream.body.expectedLength
      var written = 0
      for try await chunk in stream {
        try handle.write(contentsOf: chunk)
        written += chunk.count
        progress?(TransferProgress(completedBytes: written, expectedBytes: expected))
      }
      if written == 0 {
        progress?(TransferProgress(completedBytes: 0, expectedBytes: expected))
      }
      try handle.close()
      try target.replace(with: partial)
    } catch {
      stream.cancel()
      try? files.removeItem(at: partial)
      throw APIError(transportError: error, request: stream.request)
    }
    return Response(value: destination, response: stream.response, request: stream.request)
  }
}
