import Errand
import Foundation

extension StubResponse {
  /// A paginated list: the page a request's `page` query item names (the first without one), as
  /// JSON, with a `Link: <...>; rel="next"` header to the page after it until the last.
  ///
  /// ```swift
  /// await stub.on(.get, "/v1/dogs", .pages([[rex, bella], [kuma]]))
  /// for try await page in client.pages(Endpoint<[Dog]>(path: "dogs")) { dogs += page.value }
  /// ```
  /// A page number past the end answers `404`.
  /// - Parameters:
  ///   - pages: The pages, in order.
  ///   - queryItem: The query item that carries the page number, counted from 1.
  /// - Returns: The answer.
  public static func pages<Page: Encodable & Sendable>(
    _ pages: [Page], queryItem: String = "page"
  ) -> StubResponse {
    .handler { request, _ in
      var components = URLComponents(url: request.url, resolvingAgainstBaseURL: true)
      let items = components?.queryItems ?? []
      let number = items.first { $0.name == queryItem }.flatMap { $0.value.flatMap(Int.init) } ?? 1
      guard pages.indices.contains(number - 1) else { return .status(404) }
      var answer = StubResponse.json(pages[number - 1])
      if number < pages.count {
        components?.queryItems =
          items.filter { $0.name != queryItem } + [
            URLQueryItem(name: queryItem, value: "\(number + 1)")
          ]
        if let next = components?.url, case .response(var response) = answer.kind {
          response.headers["Link"] = "<\(next.absoluteString)>; rel=\"next\""
          answer = .response(response)
        }
      }
      return answer
    }
  }
}
