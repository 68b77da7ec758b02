import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// One matcher, one request, and whether the one accepts the other.
struct MatchCase: Sendable, CustomTestStringConvertible {
  var matcher: RequestMatcher
  var request: HTTPRequest
  var matches: Bool

  var testDescription: String { "\(matcher) vs \(request.method) \(request.url.path): \(matches)" }
}

@Suite(.timeLimit(.minutes(3))) struct RequestMatcherTests {
  static let dogJSON = Data(#"{ "age": 3, "name": "Rex" }"#.utf8)

  static let cases: [MatchCase] = [
    MatchCase(matcher: .method(.get), request: request(.get, "/v1/dogs"), matches: true),
    MatchCase(matcher: .method(.get), request: request(.post, "/v1/dogs"), matches: false),
    MatchCase(matcher: .path("/v1/dogs"), request: request(.get, "/v1/dogs"), matches: true),
    MatchCase(matcher: .path("/v1/dogs"), request: request(.get, "/v1/dogs/1"), matches: false),
    MatchCase(matcher: .path("/v1/dogs"), request: request(.get, "/v1/dogs?page=2"), matches: true),
    MatchCase(
      matcher: .path("/v1/dogs/{id}"), request: request(.get, "/v1/dogs/42"), matches: true),
    MatchCase(matcher: .path("/v1/dogs/{id}"), request: request(.get, "/v1/dogs/"), matches: false),
    MatchCase(
      matcher: .path("/v1/dogs/{id}"), request: request(.get, "/v1/dogs/42/photos"), matches: false),
    MatchCase(
      matcher: .path("/v1/{kind}/{id}/photos"), request: request(.get, "/v1/cats/7/photos"),
      matches: true),
    MatchCase(
      matcher: .path("/v1/dogs/rex the dog"), request: request(.get, "/v1/dogs/rex%20the%20dog"),
      matches: true),
    MatchCase(
      matcher: .query("page", "2"), request: request(.get, "/v1/dogs?page=2&size=10"), matches: true
    ),
    MatchCase(
      matcher: .query("page", "2"), request: request(.get, "/v1/dogs?page=3"), matches: false),
    MatchCase(matcher: .query("page"), request: request(.get, "/v1/dogs?page=3"), matches: true),
    MatchCase(
      matcher: .query("q", "a b+c"), request: request(.get, "/v1/dogs?q=a%20b%2Bc"), matches: true),
    MatchCase(
      matcher: .query(["page": "2", "size": "10"]), request: request(.get, "/v1/d?size=10&page=2"),
      matches: true),
    MatchCase(
      matcher: .query(["page": "2", "size": "10"]), request: request(.get, "/v1/d?page=2"),
      matches: false),
    MatchCase(
      matcher: .header("X-Trace", "abc"), request: request(.get, "/", headers: ["x-trace": "abc"]),
      matches: true),
    MatchCase(
      matcher: .header("X-Trace", "abc"), request: request(.get, "/", headers: ["X-Trace": "abd"]),
      matches: false),
    MatchCase(
      matcher: .header("Authorization"),
      request: request(.get, "/", headers: ["authorization": "x"]), matches: true),
    MatchCase(matcher: .header("Authorization"), request: request(.get, "/"), matches: false),
    MatchCase(
      matcher: .body(Data("hi".utf8)), request: request(.post, "/", body: Data("hi".utf8)),
      matches: true),
    MatchCase(matcher: .body(Data()), request: request(.post, "/"), matches: true),
    MatchCase(
      matcher: .jsonBody(["name": "Rex", "age": 3] as [String: AnyCodableValue]),
      request: request(.post, "/", body: dogJSON), matches: true),
    MatchCase(
      matcher: .jsonBody(["name": "Rex"] as [String: AnyCodableValue]),
      request: request(.post, "/", body: dogJSON), matches: false),
    MatchCase(
      matcher: .jsonBody(Dog(name: "Rex")),
      request: request(.post, "/", body: Data("not json".utf8)), matches: false),
    MatchCase(matcher: .jsonBody(Dog(name: "Rex")), request: request(.post, "/"), matches: false),
    MatchCase(
      matcher: .method(.get) && .path("/v1/dogs"), request: request(.get, "/v1/dogs"), matches: true
    ),
    MatchCase(
      matcher: .method(.get) && .path("/v1/dogs"), request: request(.get, "/v1/cats"),
      matches: false),
    MatchCase(
      matcher: .path("/v1/dogs") || .path("/v1/cats"), request: request(.get, "/v1/cats"),
      matches: true),
    MatchCase(
      matcher: .path("/v1/dogs") || .path("/v1/cats"), request: request(.get, "/v1/cows"),
      matches: false),
    MatchCase(matcher: !.method(.get), request: request(.delete, "/v1/dogs"), matches: true),
    MatchCase(matcher: !.method(.get), request: request(.get, "/v1/dogs"), matches: false),
    MatchCase(
      matcher: RequestMatcher("even id") {
        ($0.url.lastPathComponent.last?.wholeNumberValue ?? 1) % 2 == 0
      },
      request: request(.get, "/v1/dogs/42"), matches: true),
    MatchCase(matcher: .any, request: request(.options, "/anything"), matches: true),
  ]

  @Test(arguments: cases)
  func matchesWhatItSays(_ matchCase: MatchCase) {
    #expect(matchCase.matcher.matches(matchCase.request) == matchCase.matches)
  }

  @Test(arguments: [
    (RequestMatcher.method(.get) && .path("/v1/dogs/{id}"), "GET /v1/dogs/{id}"),
    (.query("page", "2") && .header("X-Trace"), "query page=2 header X-Trace"),
    (.path("/a") || !.method(.post), "(/a or not (POST))"),
    (.any && .method(.put), "PUT"),
    (.jsonBody(Dog(name: "Rex")), #"JSON body {"name":"Rex"}"#),
  ])
  func describesItself(matcher: RequestMatcher, description: String) {
    #expect(matcher.description == description)
  }
}

/// A JSON value for building bodies with mixed value types in tables.
enum AnyCodableValue: Encodable, Sendable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral {
  case string(String)
  case int(Int)

  init(stringLiteral value: String) { self = .string(value) }
  init(integerLiteral value: Int) { self = .int(value) }

  func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    switch self {
    case .string(let value): try container.encode(value)
    case .int(let value): try container.encode(value)
    }
  }
}
