import Foundation
import Testing

@testable import Errand

/// The wait for a head: the first answer ends it, and the caller reads the answer (a head and
/// its body made on another thread) whole. `HandOverThreadingTests` checks the same hand-over through
/// the real transports under ThreadSanitizer.
@Suite(.timeLimit(.minutes(3))) struct WaitingTests {
  /// A head and its body made on a thread of their own (as libcurl's and URLSession's callbacks
  /// make them), answered before the caller suspends (the thread is done before `start`
  /// returns) or after.
  @Test(arguments: [true, false])
  func aHeadMadeOnAnotherThreadReachesTheCallerWhole(answeredBeforeSuspending: Bool) async throws {
    for round in 0..<20 {
      let response = try await Waiting.wait { waiting in
        let answered = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
          let (body, writer) = HTTPBody.makeStream(expectedLength: 5) {}
          writer.write(Data("round".utf8))
          writer.finish()
          waiting.resume(
            returning: HTTPResponse(status: 200 + round, headers: [:], bodyStream: body))
          answered.signal()
        }
        if answeredBeforeSuspending {
          answered.wait()
        }
      }
      #expect(response.status == 200 + round)
      let body = try #require(response.bodyStream)
      #expect(body.expectedLength == 5)
      body.limit(to: 5)
      #expect(try await body.collect() == Data("round".utf8))
    }
  }

  /// The first answer wins; later ones are refused and say so.
  @Test func onlyTheFirstAnswerEndsTheWait() async throws {
    let error = await #expect(throws: URLError.self) {
      try await Waiting.wait { waiting in
        #expect(waiting.resume(with: .failure(URLError(.timedOut))))
        #expect(!waiting.resume(with: .success(HTTPResponse(status: 200, headers: [:]))))
      }
    }
    #expect(error?.code == .timedOut)
  }
}
