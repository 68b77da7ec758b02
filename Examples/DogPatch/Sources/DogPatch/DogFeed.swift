import Errand
import Foundation

/// New dogs as the shop lists them: the `dog` events of `GET /dogs/feed`, a Server-Sent Events
/// stream, each decoded as it arrives. Other events (keep-alives, notices) are skipped.
///
/// ```swift
/// for try await dog in try await client.newDogs() { print(dog.name) }
/// ```
public struct DogFeed: AsyncSequence, Sendable {
  /// A new dog.
  public typealias Element = Dog

  let events: ServerSentEvents

  /// Reads the new dogs in order.
  public struct AsyncIterator: AsyncIteratorProtocol {
    var events: ServerSentEvents.AsyncIterator

    /// The next new dog, or `nil` when the feed ends.
    /// - Returns: The dog.
    /// - Throws: `APIError`; a `dog` event that is not a dog is `APIError.decoding`.
    public mutating func next() async throws -> Dog? {
      while let event = try await events.next() {
        guard event.event == "dog" else { continue }
        do {
          return try JSONDecoder().decode(Dog.self, from: Data(event.data.utf8))
        } catch {
          throw APIError.decoding(
            error, HTTPResponse(status: 200, body: Data(event.data.utf8)))
        }
      }
      return nil
    }
  }

  /// An iterator over the new dogs.
  /// - Returns: The iterator.
  public func makeAsyncIterator() -> AsyncIterator {
    AsyncIterator(events: events.makeAsyncIterator())
  }
}

extension DogPatchClient {
  /// `GET /dogs/feed`: new dogs as they are listed.
  public static let feed = Endpoint<Data>(path: "dogs/feed", decoding: .data)

  /// Follow the feed of new dogs.
  /// - Returns: The dogs, as they arrive.
  /// - Throws: `APIError` when the feed cannot be opened.
  public func newDogs() async throws -> DogFeed {
    DogFeed(events: try await api.events(Self.feed))
  }
}
