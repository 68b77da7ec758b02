import Errand
import Foundation

/// A client made after the endpoints that act on it: for a probe whose endpoint (its body, its
/// decoding) reaches its own client while the call runs.
package final class LateClient: Sendable {
  private let held = Locked<APIClient?>(nil)

  package init() {}

  /// The client, once set.
  package var client: APIClient? {
    get { held.withLock { $0 } }
    set { held.withLock { $0 = newValue } }
  }

  /// `cancelAll()` on the client, remembering how many calls it ended.
  /// - Returns: The count `cancelAll()` returned; `-1` before a client was set.
  @discardableResult
  package func cancelAll() -> Int {
    let count = client?.cancelAll() ?? -1
    counts.withLock { $0.append(count) }
    return count
  }

  /// What each ``cancelAll()`` returned, in order.
  package var cancelled: [Int] { counts.withLock { $0 } }
  private let counts = Locked<[Int]>([])
}

/// A JSON body that runs `action` while it is encoded, that is while its call's request is being
/// built: for a probe of what happens to a call cancelled before it is sent.
package struct RunsWhenEncoded: Encodable, Sendable {
  package let action: @Sendable () -> Void

  package init(_ action: @escaping @Sendable () -> Void) {
    self.action = action
  }

  package func encode(to encoder: any Encoder) throws {
    action()
    var container = encoder.singleValueContainer()
    try container.encode("body")
  }
}

/// A middleware that counts the requests that pass it: whether anything below the client ran.
package struct CountsPasses: Middleware {
  private let count = Locked(0)

  package init() {}

  /// How many requests passed.
  package var passes: Int { count.withLock { $0 } }

  package func intercept(
    _ request: HTTPRequest, next: @Sendable (HTTPRequest) async throws -> HTTPResponse
  ) async throws -> HTTPResponse {
    count.withLock { $0 += 1 }
    return try await next(request)
  }
}

/// A task that makes one call of `endpoint` through `client`: streamed and read to its end when
/// `streams`, else buffered with `send`.
package func startCall(_ client: APIClient, _ endpoint: Endpoint<Data>, streams: Bool)
  -> Task<Void, any Error>
{
  Task {
    if streams {
      _ = try await client.stream(endpoint).collect()
    } else {
      _ = try await client.send(endpoint)
    }
  }
}
