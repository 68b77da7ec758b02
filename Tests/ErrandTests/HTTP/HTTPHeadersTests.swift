import Errand
import ErrandTesting
import TestSupport
import Testing

/// Headers from pairs, for tables with repeated names (a dictionary literal warns about those).
func headers(_ pairs: (String, String)...) -> HTTPHeaders {
  HTTPHeaders(pairs.map { HTTPHeaders.Field(name: $0.0, value: $0.1) })
}

@Suite(.timeLimit(.minutes(3))) struct HTTPHeadersTests {
  @Test(arguments: ["content-type", "Content-Type", "CONTENT-TYPE", "cOnTeNt-TyPe"])
  func looksUpNamesIgnoringCase(name: String) {
    let headers: HTTPHeaders = ["Content-Type": "application/json"]
    #expect(headers[name] == "application/json")
    #expect(headers.contains(name))
  }

  @Test func keepsOrderAndRepeatedNames() {
    var headers: HTTPHeaders = ["B": "1", "A": "2"]
    headers.add("b", "3")
    #expect(headers.fields.map(\.description) == ["B: 1", "A: 2", "b: 3"])
    #expect(headers["B"] == "1")
    #expect(headers.values(for: "B") == ["1", "3"])
    #expect(headers.count == 3)
  }

  @Test func settingReplacesEveryFieldAtTheFirstPosition() {
    var headers = headers(("A", "1"), ("X-Trace", "a"), ("B", "2"), ("x-trace", "b"))
    headers["X-TRACE"] = "c"
    #expect(headers.fields.map(\.description) == ["A: 1", "X-TRACE: c", "B: 2"])
    headers["x-trace"] = nil
    #expect(headers.fields.map(\.description) == ["A: 1", "B: 2"])
    headers.remove("a")
    #expect(headers.fields.map(\.description) == ["B: 2"])
  }

  @Test func mergeReplacesNamesFromTheOtherList() {
    let merged = headers(("A", "1"), ("Accept", "x"), ("accept", "y")).merging([
      "ACCEPT": "z", "C": "3",
    ])
    #expect(merged.fields.map(\.description) == ["A: 1", "ACCEPT: z", "C: 3"])
  }

  @Test(
    arguments: [
      (headers(("A", "1"), ("B", "2")), headers(("b", "2"), ("a", "1")), true),
      (headers(("A", "1"), ("A", "2")), headers(("a", "1"), ("a", "2")), true),
      (headers(("A", "1"), ("A", "2")), headers(("A", "2"), ("A", "1")), false),
      (headers(("A", "1")), headers(("A", "1"), ("A", "1")), false),
      (headers(("A", "x")), headers(("A", "X")), false),
      (headers(), headers(), true),
    ] as [(HTTPHeaders, HTTPHeaders, Bool)])
  func equalityIgnoresCaseAndOrderBetweenNames(lhs: HTTPHeaders, rhs: HTTPHeaders, equal: Bool) {
    #expect((lhs == rhs) == equal)
    if equal {
      #expect(lhs.hashValue == rhs.hashValue)
      #expect(Set([lhs, rhs]).count == 1)
    }
  }

  @Test func descriptionHidesCredentials() {
    let headers: HTTPHeaders = [
      "Authorization": "Bearer s3cret", "Cookie": "session=s3cret",
      "proxy-authorization": "Basic s3cret",
      "Set-Cookie": "id=s3cret", "Accept": "application/json",
    ]
    #expect(!headers.description.contains("s3cret"))
    #expect(
      headers.description
        == "Authorization: <redacted>\nCookie: <redacted>\nproxy-authorization: <redacted>\n"
        + "Set-Cookie: <redacted>\nAccept: application/json")
  }

  @Test func redactsExtraNames() {
    let headers: HTTPHeaders = ["X-Api-Key": "k", "Accept": "a"]
    #expect(
      Redaction(headers: ["x-api-key"]).redact(headers) == [
        "X-Api-Key": "<redacted>", "Accept": "a",
      ])
    #expect(Redaction(headers: []).redact(headers) == headers)
  }
}
