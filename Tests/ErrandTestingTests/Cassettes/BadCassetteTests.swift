import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(3))) struct BadCassetteTests {
  private func write(_ text: String) throws -> URL {
    let file = temporaryCassette()
    try FileManager.default.createDirectory(
      at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
    try Data(text.utf8).write(to: file)
    return file
  }

  private func error(loading file: URL) async throws -> CassetteError {
    try await #require(throws: CassetteError.self) {
      _ = try await CassetteTransport(url: file, mode: .none).send(
        HTTPRequest(url: URL(string: "https://x.example/")!))
    }
  }

  @Test func invalidJSONGivesThePosition() async throws {
    let file = try write("{\n  \"version\": 1,\n  \"exchanges\": [ {,} ]\n}")
    let error = try await error(loading: file)
    #expect(
      error == .invalidJSON(path: file.path, line: 3, column: 19, reason: "expected a quoted key"))
    #expect(
      error.description
        == "The cassette at \(file.path) is not valid JSON: line 3, column 19: expected a quoted key."
    )
  }

  @Test func anUnknownVersionIsNamed() async throws {
    let file = try write(#"{"version": 7, "exchanges": []}"#)
    let error = try await error(loading: file)
    #expect(error == .unsupportedVersion(path: file.path, found: 7, supported: 1))
    #expect(
      error.description
        == "The cassette at \(file.path) has version 7; this Errand reads version 1.")
  }

  @Test(arguments: [
    (#"{"exchanges": []}"#, #"it has no "version" number"#),
    (#"{"version": 1}"#, #"it has no "exchanges" array"#),
    (
      #"{"version": 1, "exchanges": [{"request": {"method": "GET", "url": "https://x.example/"}}]}"#,
      "exchanges[0].response is missing"
    ),
    (
      #"{"version": 1, "exchanges": [{"request": {"url": "https://x.example/"}, "response": {"status": 200}}]}"#,
      "exchanges[0].request.method must be a string"
    ),
    (
      #"{"version": 1, "exchanges": [{"request": {"method": "GET", "url": "https://x.example/"}, "response": {"status": "ok"}}]}"#,
      "exchanges[0].response.status must be a number"
    ),
    (
      #"{"version": 1, "exchanges": [{"request": {"method": "GET", "url": "https://x.example/"}, "response": {"status": 200, "body": {"base64": "%%%"}}}]}"#,
      "exchanges[0].response.body has base64 that does not decode"
    ),
    (
      #"{"version": 1, "exchanges": [{"request": {"method": "GET", "url": "https://x.example/", "headers": {"a": "b"}}, "response": {"status": 200}}]}"#,
      "exchanges[0].request.headers must be an array of [name, value] pairs"
    ),
  ])
  func malformedCassettesSayWhatIsWrong(text: String, reason: String) async throws {
    let file = try write(text)
    #expect(try await error(loading: file) == .malformed(path: file.path, reason: reason))
  }
}
