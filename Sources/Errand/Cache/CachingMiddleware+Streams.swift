import Foundation

extension CachingMiddleware {
  /// A streamed answer that may be stored: the caller reads it as it arrives while a copy is
  /// kept, and it is stored once read to the end within the memory budget; a stream that fails,
  /// is left early or grows past the budget is not stored. One task a stream, not one a chunk.
  func recording(
    _ response: HTTPResponse, for request: HTTPRequest, clock: any Clock<Duration>
  ) -> HTTPResponse {
    guard let upstream = response.bodyStream,
      CacheEntry(
        response.collectedForStorage(Data()), for: request, clock: clock,
        heuristic: cache.heuristicFreshness) != nil
    else { return response }
    let copying = Locked<Task<Void, Never>?>(nil)
    let (body, writer) = HTTPBody.makeStream(expectedLength: upstream.expectedLength) {
      copying.withLock { $0 }?.cancel()
      upstream.cancel()
    }
    let cache = cache
    let task = Task {
      var kept: Data? = Data()
      do {
        for try await chunk in upstream {
          kept?.append(chunk)  // in place: a copy out of the optional would copy it all
          if (kept?.count ?? 0) > cache.memoryBudget {
            kept = nil
          }
          switch writer.write(chunk) {
          case .stop:
            return
          case .pause:
            await withCheckedContinuation { resume in writer.whenDrained { resume.resume() } }
          case .proceed:
            break
          }
        }
        // Stored before the reader hears of the end, so that its next call finds it.
        if let kept,
          let entry = CacheEntry(
            response.collectedForStorage(kept), for: request, clock: clock,
            heuristic: cache.heuristicFreshness)
        {
          cache.insert(entry)
        }
        writer.finish()
      } catch {
        writer.finish(throwing: error)
      }
    }
    copying.withLock { $0 = task }
    var recorded = response
    recorded.bodyStream = body
    return recorded
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
