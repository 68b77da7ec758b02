import Foundation

extension CachingMiddleware {
  /// A streamed answer that may be stored: the caller reads it as it arrives while a copy is
  /// kept, and it is stored once read to the end within the memory budget; a stream that fails,
  /// is left early or grows past the budget is not stored. One task a stream, not one a chunk.
  func recording(
    _ response: HTTPResponse, for request: HTTPRequest, clock: any Clock<Duration>,
    delay: Duration
  ) -> HTTPResponse {
    let now = cache.now()
    guard let upstream = response.bodyStream,
      CacheEntry(
        response.collectedForStorage(Data()), for: request, clock: clock,
        heuristic: cache.heuristicFreshness, now: now, responseDelay: delay) != nil
    else { return response }
    let copying = Locked<Task<Void, Never>?>(nil)
    let (body, writer) = HTTPBody.makeStream(expectedLength: upstream.expectedLength) {
      copying.withLock { $0 }?.cancel()
      upstream.cancel()
    }
    let cache = cache
    let task = Task {
      var kept: Data? = Data()
      await writer.copy(upstream) { chunk in
        kept?.append(chunk)  // in place: a copy out of the optional would copy it all
        if (kept?.count ?? 0) > cache.memoryBudget {
          kept = nil
        }
      } beforeEnd: {
        // Stored before the reader hears of the end, so that its next call finds it.
        if let kept,
          let entry = CacheEntry(
            response.collectedForStorage(kept), for: request, clock: clock,
            heuristic: cache.heuristicFreshness, now: now, responseDelay: delay)
        {
          await cache.insert(entry)
        }
      }
    }
    copying.withLock { $0 = task }
    var recorded = response
    recorded.bodyStream = body
    return recorded
  }
}

extension CachingMiddleware {
  /// `response` with its streamed body read ahead, up to `limit` bytes: whole, when it ends
  /// within them (with the metrics its transport reported at the end, as the caller would have
  /// found them at the end of the stream); else streaming on, the bytes read first and then the
  /// rest.
  /// - Throws: The error that ended the body before the limit.
  static func readingAhead(_ response: HTTPResponse, upTo limit: Int) async throws
    -> HTTPResponse
  {
    guard let upstream = response.bodyStream else { return response }
    var read = Data()
    for try await chunk in upstream {
      read.append(chunk)
      if read.count > limit {
        return continuing(response, from: upstream, after: read)
      }
    }
    return response.collectedForStorage(read).withMetrics(atEndOf: upstream)
  }

  /// `response` streaming `read` and then the rest of `upstream`, which is read by one task that
  /// stops when the reader does.
  private static func continuing(
    _ response: HTTPResponse, from upstream: HTTPBody, after read: Data
  )
    -> HTTPResponse
  {
    let copying = Locked<Task<Void, Never>?>(nil)
    let (body, writer) = HTTPBody.makeStream(expectedLength: upstream.expectedLength) {
      copying.withLock { $0 }?.cancel()
      upstream.cancel()
    }
    writer.write(read)
    let task = Task {
      await writer.copy(upstream)
    }
    copying.withLock { $0 = task }
    var continued = response
    continued.bodyStream = body
    return continued
  }
}

extension HTTPResponse {
  /// The head of a streamed response with `body` in place of its stream, for storing.
  fileprivate func collectedForStorage(_ body: Data) -> HTTPResponse {
    var whole = self
    whole.bodyStream = nil
    whole.body = body
    return whole
  }
}
