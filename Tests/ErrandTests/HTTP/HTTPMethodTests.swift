import Errand
import ErrandTesting
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(3))) struct HTTPMethodTests {
  @Test(arguments: [
    (HTTPMethod.get, "GET", true), (.post, "POST", false), (.put, "PUT", true),
    (.patch, "PATCH", false),
    (.delete, "DELETE", true), (.head, "HEAD", true), (.options, "OPTIONS", true),
    ("PURGE", "PURGE", false),
  ])
  func hasItsNameAndIdempotence(method: HTTPMethod, name: String, idempotent: Bool) {
    #expect(method.rawValue == name)
    #expect(method.description == name)
    #expect(method.isIdempotent == idempotent)
    #expect(HTTPMethod(rawValue: name) == method)
  }
}
