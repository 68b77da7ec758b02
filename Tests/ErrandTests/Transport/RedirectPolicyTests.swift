import Foundation
import TestSupport
import Testing

@testable import Errand

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

@Suite(.timeLimit(.minutes(3))) struct RedirectPolicyTests {
  private let headers: HTTPHeaders = [
    "Authorization": "Bearer s3cret", "Proxy-Authorization": "Basic s3cret", "Cookie": "a=s3cret",
    "X-API-Key": "k3y", "X-Auth-Token": "t0k3n", "X-Trace": "abc",
  ]

  private func proposed(_ target: String) -> URLRequest {
    var request = URLRequest(url: url(target))
    for field in headers.fields {
      request.setValue(field.value, forHTTPHeaderField: field.name)
    }
    return request
  }

  /// A delegate, and a task of `https://api.example.com/a` answered with a 302 to `location`.
  private func redirect(
    to location: String
  ) throws -> (SessionDelegate, URLSession, URLSessionDataTask, HTTPURLResponse) {
    let session = URLSession(configuration: .ephemeral)
    let response = try #require(
      HTTPURLResponse(
        url: url("https://api.example.com/a"), statusCode: 302, httpVersion: "HTTP/1.1",
        headerFields: ["Location": location]))
    return (
      SessionDelegate(), session, session.dataTask(with: url("https://api.example.com/a")),
      response
    )
  }

  @Test(arguments: [
    ("https://api.example.com/a", "https://api.example.com/b", true),
    ("https://api.example.com/a", "https://API.example.com:443/b", true),
    ("http://api.example.com/a", "http://api.example.com:80/b", true),
    ("https://api.example.com/a", "https://api.example.com:8443/b", false),
    ("https://api.example.com/a", "https://cdn.example.com/b", false),
    ("http://127.0.0.1:8080/a", "http://127.0.0.1:8081/b", false),
    ("http://api.example.com/a", "https://api.example.com/b", false),
  ])
  func keepsCredentialsOnlyWithinTheOrigin(source: String, target: String, sameOrigin: Bool) throws
  {
    guard
      case .follow(let next, let kept) = RedirectPolicy.decide(
        from: url(source), to: url(target), headers: headers)
    else {
      Issue.record("expected the redirect to be followed")
      return
    }
    #expect(next == url(target))
    #expect(kept["X-Trace"] == "abc")
    for name in ["Authorization", "Proxy-Authorization", "Cookie", "X-API-Key", "X-Auth-Token"] {
      #expect(kept.contains(name) == sameOrigin, "\(name)")
    }
  }

  @Test(arguments: [
    "http://api.example.com/b", "HTTP://api.example.com/b", "http://elsewhere.example/",
  ])
  func refusesHTTPSToHTTP(target: String) {
    let source = url("https://api.example.com/a")
    #expect(
      RedirectPolicy.decide(from: source, to: url(target), headers: headers)
        == .refuse(
          RefusedRedirectError(
            from: source.absoluteString, location: url(target).absoluteString,
            reason: .downgradeToHTTP)))
  }

  @Test func delegateRefusesADowngradeAndEndsTheExchangeWithIt() async throws {
    let (delegate, session, task, response) = try redirect(to: "http://api.example.com/b")
    defer { session.invalidateAndCancel() }
    // As URLSessionTransport does: the exchange is registered before the task starts; the
    // delegate then refuses the redirect, and the task completes without an error of its own.
    let refused = try await #require(throws: RefusedRedirectError.self) {
      try await Waiting.wait { waiting in
        delegate.register(task, waiting: waiting, exchange: Exchange())
        let next = Locked<URLRequest?>(URLRequest(url: url("http://unset.example")))
        delegate.urlSession(
          session, task: task, willPerformHTTPRedirection: response,
          newRequest: proposed("http://api.example.com/b")
        ) { request in next.withLock { $0 = request } }
        #expect(next.withLock { $0 } == nil)
        delegate.urlSession(session, task: task, didCompleteWithError: nil)
      }
    }
    #expect(refused.reason == .downgradeToHTTP)
    #expect(
      refused.localizedDescription
        == "refused to follow a redirect from https://api.example.com/a to http://api.example.com/b: "
        + "it would downgrade HTTPS to plain HTTP")
  }

  /// What URLSessionTransport's delegate hands back to URLSession for a redirect it follows: the
  /// policy's URL and headers, written into URLSession's own proposal.
  @Test(arguments: [
    ("https://api.example.com/b", true), ("https://cdn.example.com/b", false),
    ("https://ann:pa55@cdn.example.com/b", false),
  ])
  func delegateFollowsWithThePolicysURLAndHeaders(target: String, sameOrigin: Bool) throws {
    let (delegate, session, task, response) = try redirect(to: target)
    defer { session.invalidateAndCancel() }
    let next = Locked<URLRequest?>(nil)
    delegate.urlSession(
      session, task: task, willPerformHTTPRedirection: response, newRequest: proposed(target)
    ) { request in next.withLock { $0 = request } }
    let followed = try #require(next.withLock { $0 })
    #expect(followed.url?.user == nil && followed.url?.password == nil)
    #expect(followed.url?.host == url(target).host)
    #expect(followed.value(forHTTPHeaderField: "X-Trace") == "abc")
    for name in ["Authorization", "Proxy-Authorization", "Cookie", "X-API-Key", "X-Auth-Token"] {
      #expect((followed.value(forHTTPHeaderField: name) != nil) == sameOrigin, "\(name)")
    }
  }

  @Test func aRefusedDowngradeNeverPrintsTheSecretsOfEitherURL() throws {
    let source = url("https://ann:pa55word@api.example.com/a?token=s3cret-a")
    let decision = RedirectPolicy.decide(
      from: source, to: url("http://api.example.com/b?access_token=s3cret-b"), headers: headers)
    guard case .refuse(let refused) = decision else {
      Issue.record("expected a refusal, got \(decision)")
      return
    }
    #expect(refused.reason == .downgradeToHTTP)
    let text = APIError.transport(refused).localizedDescription
    for secret in ["pa55word", "s3cret-a", "s3cret-b"] {
      #expect(!text.contains(secret), "\(text)")
    }
    #expect(text.contains("it would downgrade HTTPS to plain HTTP"))
  }

  @Test func refusedRedirectIsATransportErrorThatSaysWhy() {
    let error = APIError.transport(
      RefusedRedirectError(
        from: "https://a.example/x", location: "http://a.example/y", reason: .downgradeToHTTP))
    #expect(
      error.localizedDescription
        == "The request stopped at a redirect: refused to follow a redirect from https://a.example/x to "
        + "http://a.example/y: it would downgrade HTTPS to plain HTTP")
  }
}
