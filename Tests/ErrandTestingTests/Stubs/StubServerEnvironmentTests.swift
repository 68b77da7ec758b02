import ErrandTesting
import Foundation
import TestSupport
import Testing

/// `StubServerEnvironment`: the app finds the stub server in its environment, and only ever one
/// on this machine's loopback interface.
@Suite(.timeLimit(.minutes(3))) struct StubServerEnvironmentTests {
  static let accepted: [(String, String)] = [
    ("http://127.0.0.1:49152", "http://127.0.0.1:49152"),
    ("http://127.0.0.1:49152/", "http://127.0.0.1:49152"),
    ("http://localhost:8080", "http://localhost:8080"),
    ("HTTP://LOCALHOST:8080", "http://localhost:8080"),
    ("http://[::1]:8080", "http://[::1]:8080"),
  ]

  @Test(arguments: accepted.map(\.0))
  func aLoopbackURLIsAccepted(_ value: String) {
    let expected = Self.accepted.first { $0.0 == value }?.1
    let found = StubServerEnvironment.baseURL(in: [StubServerEnvironment.key: value])
    #expect(found?.absoluteString == expected)
  }

  static let refused = [
    "http://example.com:8080", "https://127.0.0.1:8080", "http://127.0.0.1.nip.io:8080",
    "http://127.0.0.2:8080", "http://0.0.0.0:8080", "http://[::]:8080", "http://10.0.0.1:8080",
    "http://user:pw@127.0.0.1:8080", "http://127.0.0.1@evil.example:8080",
    "http://127.0.0.1:8080/v1", "http://127.0.0.1:8080?x=1", "http://127.0.0.1:8080#x",
    "http://127.0.0.1:0", "http://127.0.0.1:99999", " http://127.0.0.1:8080",
    "http://127.0.0.1:8080\n", "http://127%2E0.0.1:8080", "ftp://127.0.0.1:8080",
    "//127.0.0.1:8080", "127.0.0.1:8080", "", "http://localhost.:8080",
    "http://evil.example\\@127.0.0.1:8080",
    "http://127.0.0.1", "http://localhost/", "http://[::1]:",
  ]

  @Test(arguments: refused)
  func anythingElseIsRefused(_ value: String) {
    #expect(StubServerEnvironment.baseURL(in: [StubServerEnvironment.key: value]) == nil)
    #expect(
      StubServerEnvironment.baseURL(
        in: [StubServerEnvironment.key: value], replacing: url("https://api.example.com/v1")) == nil
    )
  }

  @Test func withoutTheKeyThereIsNoServer() {
    #expect(StubServerEnvironment.key == "ERRAND_STUB_SERVER_URL")
    #expect(StubServerEnvironment.baseURL(in: [:]) == nil)
    #expect(StubServerEnvironment.baseURL(in: ["OTHER": "http://127.0.0.1:1"]) == nil)
  }

  @Test func theAppsURLMovesOntoTheServerWithItsPathAndQuery() {
    let environment = [StubServerEnvironment.key: "http://127.0.0.1:49152"]
    #expect(
      StubServerEnvironment.baseURL(
        in: environment, replacing: url("https://user:pw@api.example.com:8443/v1/a?b=c"))
        == url("http://127.0.0.1:49152/v1/a?b=c"))
    #expect(
      StubServerEnvironment.baseURL(
        in: [StubServerEnvironment.key: "http://[::1]:8080"],
        replacing: url("https://api.example.com/v1")) == url("http://[::1]:8080/v1"))
  }
}
