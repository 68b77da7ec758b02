import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// Every way an app can make a call on a client, for the call-control probes: each is made on
/// an endpoint and reads any answer to its end (a reconnecting event stream: to its first event).
enum CallKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
  case send, upload, stream, download, events, reconnectingEvents, pages, callback
  var testDescription: String { rawValue }

  /// How many entries `inFlight` lists for one running call of this kind: a reconnecting event
  /// stream is listed with its open connection.
  var entries: Int { self == .reconnectingEvents ? 2 : 1 }

  /// Whether the call reads its answer as it arrives.
  var streams: Bool { [.stream, .download, .events, .reconnectingEvents].contains(self) }

  /// An answer that holds this kind of call running: a head and no more for the streamed
  /// kinds, no answer at all for the others.
  var hangs: StubResponse {
    streams ? .stalledAfterHeaders(headers: ["Content-Type": "text/event-stream"]) : .hang
  }

  /// A `GET` to `path` (a `POST` with a small body for an upload), reading its answer as data.
  func endpoint(_ path: String) -> Endpoint<Data> {
    guard self == .upload else { return Endpoint<Data>(path: path, decoding: .data) }
    return Endpoint<Data>(
      method: .post, path: path, body: .data(Data(count: 100)), decoding: .data)
  }

  /// Make the call on `client` and read its answer.
  func make(_ endpoint: Endpoint<Data>, on client: APIClient) async throws {
    switch self {
    case .send:
      _ = try await client.send(endpoint)
    case .upload:
      _ = try await client.send(endpoint) { _ in }
    case .stream:
      _ = try await client.stream(endpoint).collect()
    case .download:
      let file = FileManager.default.temporaryDirectory
        .appendingPathComponent("errand-call-\(UUID().uuidString)")
      defer { try? FileManager.default.removeItem(at: file) }
      _ = try await client.download(endpoint, to: file)
    case .events:
      for try await _ in try await client.events(endpoint) {}
    case .reconnectingEvents:
      var events = client.events(endpoint, reconnect: .default).makeAsyncIterator()
      _ = try await events.next()
    case .pages:
      for try await _ in client.pages(endpoint) {}
    case .callback:
      let handle = Locked<RequestHandle?>(nil)
      let result = await withTaskCancellationHandler {
        await withCheckedContinuation { continuation in
          let made = client.send(endpoint, queue: .global()) { continuation.resume(returning: $0) }
          handle.withLock { $0 = made }
        }
      } onCancel: {
        handle.withLock { $0 }?.cancel()
      }
      _ = try result.get()
    }
  }
}

/// That `call` ended with `APIError.cancelled`.
func expectCancelled(
  _ call: Task<Void, any Error>, sourceLocation: SourceLocation = #_sourceLocation
) async {
  let error = await #expect(throws: APIError.self, sourceLocation: sourceLocation) {
    try await call.cancellableValue
  }
  #expect(error?.kind == .cancelled, sourceLocation: sourceLocation)
}
