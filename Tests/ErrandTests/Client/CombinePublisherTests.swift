#if canImport(Combine)
  import Combine
  import Errand
  import ErrandTesting
  import Foundation
  import TestSupport
  import Testing

  /// `APIClient.publisher(for:)`, on platforms with Combine.
  @Suite(.timeLimit(.minutes(3))) struct CombinePublisherTests {
    /// Says when a request starts and when its task is cancelled; never answers by itself.
    struct WaitingTransport: Transport {
      let started: AsyncStream<Void>.Continuation
      let cancelled: AsyncStream<Void>.Continuation

      func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        started.yield()
        do {
          try await Task.sleep(for: .seconds(3600))
        } catch {
          cancelled.yield()
          throw error
        }
        throw URLError(.timedOut)
      }
    }

    @Test func publishesTheDecodedValue() async throws {
      let stub = StubTransport { _ in .json([Dog(name: "Rex")]) }
      var values = client(stub).publisher(for: Endpoint<[Dog]>(path: "dogs")).values
        .makeAsyncIterator()
      #expect(try await values.next() == [Dog(name: "Rex")])
    }

    @Test(.timeLimit(.minutes(3)))
    func cancellingTheSubscriptionCancelsTheRequest() async {
      let started = AsyncStream<Void>.makeStream()
      let cancelled = AsyncStream<Void>.makeStream()
      let transport = WaitingTransport(
        started: started.continuation, cancelled: cancelled.continuation)
      let subscription = client(transport).publisher(for: Endpoint<Data>(path: "dogs"))
        .sink(receiveCompletion: { _ in }, receiveValue: { _ in })
      var starts = started.stream.makeAsyncIterator()
      #expect(await starts.next() != nil)
      subscription.cancel()
      var cancellations = cancelled.stream.makeAsyncIterator()
      #expect(await cancellations.next() != nil)
    }
  }
#endif
