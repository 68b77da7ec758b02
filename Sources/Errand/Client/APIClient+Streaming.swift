import Foundation

extension APIClient {
  /// Send an endpoint's request and return as soon as the response's head arrives, with the body
  /// to read as it arrives.
  ///
  /// The call goes through the same request building, middleware, timeout and error mapping as
  /// ``send(_:)``; the status is validated before the body is read.
  ///
  /// On Apple platforms, URLSession sniffs the type of a body whose `Content-Type` is missing or
  /// generic (`application/octet-stream`, likely `text/plain`) and may hold the head and the first
  /// bytes until 512 bytes or the end of the body have arrived; JSON and `text/event-stream`
  /// answers are not held. Read from Apple's documentation, not verified on a device: have a
  /// server that streams small pieces send a specific `Content-Type`. An unacceptable status
  /// throws ``APIError/unacceptableStatus(_:)`` with up to 64 KB of the body, read for no longer
  /// than the call's timeout or 10 seconds, whichever is shorter. The endpoint's decoding is not
  /// used.
  ///
  /// ```swift
  /// let stream = try await client.stream(Endpoint<Data>(path: "events", decoding: .data))
  /// for try await line in stream.lines { print(line) }
  /// ```
  /// - Parameter endpoint: What to call.
  /// - Returns: The head and the body.
  /// - Throws: ``APIError``.
  public nonisolated func stream<Value>(_ endpoint: Endpoint<Value>) async throws
    -> ResponseStream
  {
    let events = beginEvents(for: endpoint)
    // Listed until the body has been read to its end, has failed, or its reader has left.
    let registration = register(endpoint, as: .streamed)
    var built: HTTPRequest?
    do {
      let request = try makeRequest(for: endpoint)
      built = request
      events?.requestBuilt(request)
      let exchange = Exchange(streams: true, deadline: nil, progress: nil, events: events)
      var response = try await run(
        request, for: endpoint, as: exchange, registeredAs: registration
      ).streamingBody()
      let body = response.bodyStream ?? HTTPBody(Data())
      registration.setCancel { body.cancel() }
      response.bodyStream = nil
      var stream = ResponseStream(
        response: response, request: request, body: body, idleTimeout: request.timeout,
        clock: configuration.clock, maximumLineLength: configuration.maximumLineLength)
      guard accepts(response.status, for: endpoint) else {
        response.body = await stream.prefix(
          upTo: Self.errorBodyLimit,
          within: request.timeout.map { min($0, Self.errorBodyTime) } ?? Self.errorBodyTime)
        // Cancelled while its error was read: it ends as cancelled, as `cancelAll()` counted it.
        if registration.finish() { throw CallRegistration.cancelled(request) }
        throw unacceptable(response, for: endpoint)
      }
      // The call ends with its body: the stream posts its progress and its end.
      stream.events = events
      stream.registration = registration
      return stream
    } catch {
      // Counted by `cancelAll()` before it failed: it ends as cancelled, as counted.
      let error = registration.ending(with: error, request: built)
      events?.failed(error)
      throw error
    }
  }

  /// The most of an unacceptable answer's body a streamed call reads for its error: 64 KB.
  static let errorBodyLimit = 64 * 1024
  /// The longest a streamed call spends reading an unacceptable answer's body, when the call's
  /// timeout is not shorter: 10 seconds.
  static let errorBodyTime = Duration.seconds(10)
}

extension ResponseStream {
  /// Up to `maximum` bytes of the body, for an error message: whatever arrived when the body
  /// ends, fails or stalls, or when `time` has passed on the stream's clock, however the bytes
  /// trickle in. The rest is not read.
  func prefix(upTo maximum: Int, within time: Duration) async -> Data {
    // A body that has already ended (a short error answer often has) is read at once, whatever
    // the bound: the bound is for bytes that have yet to arrive.
    if let whole = try? body.buffer.takeWholeIfEnded() {
      cancel()
      return whole.prefix(maximum)
    }
    let collected = Locked(Data())
    let stream = self
    _ = try? await withDeadline(time, on: clock) {
      for try await chunk in stream {
        let full = collected.withLock { collected in
          collected.append(chunk.prefix(maximum - collected.count))
          return collected.count >= maximum
        }
        if full { break }
      }
      return true
    }
    // The error is the status; a body cut short still says what it can.
    cancel()
    return collected.withLock { $0 }
  }
}

extension APIClient {
  /// Read a Server-Sent Events stream: ``stream(_:)``, parsed into events as they arrive. Sends
  /// `Accept: text/event-stream` and `Cache-Control: no-cache` unless the endpoint sets them
  /// (as `EventSource` does: no cache between the app and the server may answer with a stored
  /// copy). Each event is at most ``Configuration/maximumEventSize`` bytes.
  ///
  /// ```swift
  /// for try await event in try await client.events(Endpoint<Data>(path: "sse", decoding: .data)) {
  ///   print(event.event, event.data, event.id ?? "-")
  /// }
  /// ```
  /// - Parameter endpoint: What to call.
  /// - Returns: The events.
  /// - Throws: ``APIError``, as ``stream(_:)`` does.
  public nonisolated func events<Value>(_ endpoint: Endpoint<Value>) async throws
    -> ServerSentEvents
  {
    try await events(endpoint, lastEventID: "")
  }

  /// ``events(_:)``, with the last event ID buffer starting as `lastEventID`.
  nonisolated func events<Value>(_ endpoint: Endpoint<Value>, lastEventID: String) async throws
    -> ServerSentEvents
  {
    var endpoint = endpoint
    if endpoint.headers["Accept"] == nil {
      endpoint.headers["Accept"] = "text/event-stream"
    }
    if endpoint.headers["Cache-Control"] == nil {
      endpoint.headers["Cache-Control"] = "no-cache"
    }
    return ServerSentEvents(
      stream: try await stream(endpoint), maximumEventSize: configuration.eventSizeLimit,
      lastEventID: lastEventID)
  }

  /// Read a JSON Lines body: ``stream(_:)``, each line decoded as `Value` with the client's
  /// decoder as it arrives.
  ///
  /// ```swift
  /// for try await dog in try await client.jsonLines(Endpoint<Dog>(path: "dogs.jsonl")) { show(dog) }
  /// ```
  /// - Parameter endpoint: What to call; its type is the type of each line.
  /// - Returns: The values.
  /// - Throws: ``APIError``, as ``stream(_:)`` does.
  public nonisolated func jsonLines<Value: Decodable & Sendable>(_ endpoint: Endpoint<Value>)
    async throws -> JSONLines<Value>
  {
    JSONLines(stream: try await stream(endpoint), decoder: configuration.decoder)
  }
}
