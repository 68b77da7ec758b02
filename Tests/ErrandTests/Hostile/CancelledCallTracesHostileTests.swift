import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// Probes of what a call its client cancelled leaves behind: a half-written download, a
/// half-read answer in a cache another client shares, and what its listener hears.
@Suite(.timeLimit(.minutes(3))) struct CancelledCallTracesHostileTests {
  /// A download its client cancels mid-body leaves the file it would replace as it was, and no
  /// partial file beside it.
  @Test func aCancelledDownloadLeavesTheOldFileAndNoPart() async throws {
    let folder = FileManager.default.temporaryDirectory
      .appendingPathComponent("errand-cancelled-download-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let destination = folder.appendingPathComponent("video")
    try Data("old".utf8).write(to: destination)
    let stub = StubTransport()
    await stub.on(.any, .stalledAfterHeaders(body: Data("new, in part".utf8)))
    let client = APIClient(
      baseURL: base, transport: stub, configuration: APIClient.Configuration(timeout: nil))
    let written = Locked(0)
    let call = Task {
      _ = try await client.download(
        Endpoint<Data>(path: "video", decoding: .data), to: destination
      ) { progress in written.withLock { $0 = progress.completedBytes } }
    }
    defer { call.cancel() }
    #expect(await eventually { written.withLock { $0 } > 0 })
    #expect(client.cancelAll() == 1)
    await expectCancelled(call)
    #expect(try Data(contentsOf: destination) == Data("old".utf8))
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["video"])
  }

  /// One client's call cancelled halfway through a cacheable answer (streamed or buffered) does
  /// not leave that half in a cache another client shares: the other client's call gets the
  /// server's whole answer.
  @Test(arguments: [false, true])
  func halfAnAnswerNeverReachesAnotherClientThroughACache(streams: Bool) async throws {
    let fresh: HTTPHeaders = ["Cache-Control": "max-age=600"]
    let stub = StubTransport()
    await stub.on(
      .any,
      .sequence([
        .stalledAfterHeaders(body: Data("half".utf8), headers: fresh),
        .status(200, body: Data("whole".utf8), headers: fresh),
      ]))
    let cache = HTTPCache()
    let configuration = APIClient.Configuration(
      timeout: nil, middleware: [CachingMiddleware(cache: cache)])
    let first = APIClient(baseURL: base, transport: stub, configuration: configuration)
    let second = APIClient(baseURL: base, transport: stub, configuration: configuration)
    let feed = Endpoint<Data>(path: "feed", decoding: .data)
    let read = Locked(Data())
    let call = Task {
      if streams {
        for try await chunk in try await first.stream(feed) {
          read.withLock { $0.append(chunk) }
        }
      } else {
        read.withLock { $0 = Data("-".utf8) }
        _ = try await first.send(feed)
      }
    }
    defer { call.cancel() }
    _ = try await stub.nextRequest()
    #expect(await eventually { !read.withLock { $0 }.isEmpty })
    #expect(first.cancelAll() == 1)
    await expectCancelled(call)
    #expect(try await second.send(feed) == Data("whole".utf8))
    #expect(await stub.requests.count == 2)
  }

  /// A listener hears a call its client cancelled end as cancelled, once, and never as ended,
  /// for every kind of call but the reconnecting stream (a stream of calls).
  @Test(arguments: CallKind.allCases.filter { $0 != .reconnectingEvents })
  func theListenerHearsTheCallCancelled(_ kind: CallKind) async throws {
    let stub = StubTransport()
    await stub.on(.any, kind.hangs)
    let listener = RecordingListener()
    let client = APIClient(
      baseURL: base, transport: stub,
      configuration: APIClient.Configuration(timeout: nil, eventListeners: [listener]))
    let call = Task { try await kind.make(kind.endpoint("feed"), on: client) }
    defer { call.cancel() }
    #expect(await eventually { client.inFlight.count == 1 })
    #expect(client.cancelAll() == 1)
    await expectCancelled(call)
    let events = await listener.eventsOfOneCall().map(\.kind.name)
    #expect(events.first == "callStarted")
    #expect(events.last == "callCancelled")
    #expect(!events.contains("callEnded") && !events.contains("callFailed"))
  }
}
