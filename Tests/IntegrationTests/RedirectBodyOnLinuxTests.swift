import Foundation
import LoopbackServer
import TestSupport
import Testing

@testable import Errand

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Why `URLSessionTransport` on Linux delivers a `301`–`308` without `Location` with an empty
/// body: FoundationNetworking keeps the body of every such answer to itself (it hands it over only
/// when a delegate refuses a redirect that has a `Location`), so no delegate, and so no
/// transport built on URLSession, ever sees it. This test asks URLSession directly, with a
/// delegate that records every byte it is given; it will fail the day FoundationNetworking
/// delivers the body, and the transport can then do the same.
@Suite(.timeLimit(.minutes(3))) struct RedirectBodyOnLinuxTests {
  /// Records the status and every byte a data task is given, and when it completes.
  final class Recorder: NSObject, URLSessionDataDelegate, Sendable {
    let received = Locked(Data())
    let status = Locked<Int?>(nil)
    let done = AsyncStream<Void>.makeStream()

    func urlSession(
      _ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data
    ) {
      received.withLock { $0.append(data) }
    }

    func urlSession(
      _ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?
    ) {
      status.withLock { $0 = (task.response as? HTTPURLResponse)?.statusCode }
      done.continuation.finish()
    }
  }

  @Test(arguments: [300, 301, 302, 303, 307, 308])
  func urlSessionGivesNoDelegateTheBodyOfARedirectWithoutLocation(status: Int) async throws {
    let body = Data("moved, but not saying where".utf8)
    let server = try LoopbackServer { _ in ScriptedResponse(status: status, body: body) }
    defer { server.stop() }
    let recorder = Recorder()
    let session = URLSession(
      configuration: .ephemeral, delegate: recorder, delegateQueue: nil)
    defer { session.invalidateAndCancel() }
    session.dataTask(with: server.url("/old")).resume()
    for await _ in recorder.done.stream {}
    #expect(recorder.status.withLock { $0 } == status)
    #if canImport(FoundationNetworking)
      // 300 is not a redirect URLSession follows, and its body arrives.
      #expect(recorder.received.withLock { $0 } == (status == 300 ? body : Data()))
    #else
      #expect(recorder.received.withLock { $0 } == body)
    #endif
  }
}
