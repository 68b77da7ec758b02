import Errand
import Foundation

/// Streamed answers: replayed chunk by chunk, or recorded as the upstream sends them.
extension CassetteTransport {
  /// Answer as ``send(_:)`` does, returning at the head. A recorded stream replays chunk by
  /// chunk (an event stream event by event); recording streams the upstream's body to the caller
  /// as it arrives and writes the exchange, with its chunks, once the body has ended. A body cut
  /// short by the connection (a `URLError`, as a dropped event stream is) is recorded with how it
  /// dropped, and replays the same chunks and the same error; one the reader left is not
  /// recorded.
  /// - Parameter request: The request.
  /// - Returns: The head, with its body in `bodyStream`.
  /// - Throws: What ``send(_:)`` throws.
  public func stream(_ request: HTTPRequest) async throws -> HTTPResponse {
    try await stream(request, exchange: Exchange(streams: true))
  }

  /// ``stream(_:)`` within a call: a request recorded goes to the upstream with the call's
  /// `exchange`.
  func stream(_ request: HTTPRequest, exchange: Exchange) async throws -> HTTPResponse {
    try request.validate()  // as every transport does, replaying or recording
    let request = try request.readingBodyFile()
    if let recorded = try played(request) {
      var head = recorded.response
      let (body, writer) = HTTPBody.makeStream(expectedLength: nil) {}
      for chunk in recorded.chunks ?? [head.body] {
        writer.write(chunk)
      }
      if let code = recorded.droppedWith {
        writer.finish(
          throwing: URLError(code, userInfo: [NSURLErrorFailingURLErrorKey: request.url]))
      } else {
        writer.finish()
      }
      head.body = Data()
      head.bodyStream = body
      return head
    }
    guard let upstream else { throw CassetteError.noUpstream(path: url.path) }
    var streaming = exchange
    streaming.streams = true
    var head = try await upstream.send(request, as: streaming)
    guard let upstreamBody = head.bodyStream else {
      try record(Cassette.Exchange(request: request, response: head))
      return head
    }
    let copying = Locked<Task<Void, Never>?>(nil)
    let (body, writer) = HTTPBody.makeStream(expectedLength: upstreamBody.expectedLength) {
      copying.withLock { $0 }?.cancel()
      upstreamBody.cancel()
    }
    var recordedHead = head
    recordedHead.bodyStream = nil
    let task = Task {
      var chunks: [Data] = []
      do {
        for try await chunk in upstreamBody {
          chunks.append(chunk)
          writer.write(chunk)
        }
        recordedHead.body = chunks.reduce(into: Data()) { $0.append($1) }
        try self.record(Cassette.Exchange(request: request, response: recordedHead, chunks: chunks))
        writer.finish(as: upstreamBody)
      } catch let dropped as URLError where dropped.code != .cancelled {
        recordedHead.body = chunks.reduce(into: Data()) { $0.append($1) }
        try? self.record(
          Cassette.Exchange(
            request: request, response: recordedHead, chunks: chunks, droppedWith: dropped.code))
        writer.finish(throwing: dropped)
      } catch {
        writer.finish(throwing: error)
      }
    }
    copying.withLock { $0 = task }
    head.bodyStream = body
    return head
  }
}
