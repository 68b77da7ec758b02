import Errand
import Foundation
import TestSupport
import Testing

/// The token storages Errand ships: in memory, and a file written atomically as `0600`.
@Suite(.timeLimit(.minutes(3))) struct TokenStorageTests {
  static let tokens = StoredTokens(
    accessToken: "at-SECRET-1", expiresAt: Date(timeIntervalSince1970: 1_700_003_600),
    refreshToken: "rt-SECRET-2", scope: "dogs:read")

  /// A folder of its own, removed when `body` ends.
  static func inFolder(_ body: (URL) async throws -> Void) async throws {
    let folder = FileManager.default.temporaryDirectory
      .appendingPathComponent("errand-tokens-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    // 0755 whatever the process's umask, which a disk cache test may set to 0 meanwhile (a
    // folder every user may write is rightly refused).
    try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder.path)
    try await body(folder)
  }

  @Test func inMemoryKeepsWhatIsSaved() async throws {
    let storage = InMemoryTokenStorage()
    #expect(try await storage.load() == nil)
    try await storage.save(Self.tokens)
    #expect(try await storage.load() == Self.tokens)
    try await storage.remove()
    #expect(try await storage.load() == nil)
  }

  /// The file round-trips the tokens, is `0600`, and no temporary file is left beside it.
  @Test func aFileKeepsTheTokensReadableByTheUserAlone() async throws {
    try await Self.inFolder { folder in
      let url = folder.appendingPathComponent("tokens.json")
      let storage = FileTokenStorage(url: url)
      #expect(try await storage.load() == nil)
      try await storage.save(StoredTokens(refreshToken: "first"))
      try await storage.save(Self.tokens)
      #expect(try await storage.load() == Self.tokens)
      let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
      #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
      #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["tokens.json"])
      try await storage.remove()
      try await storage.remove()
      #expect(try await storage.load() == nil)
    }
  }

  /// A file that does not hold tokens, or is not a file, fails with `TokenStorageError`, quoting
  /// none of its contents.
  @Test(arguments: [#"{"access_token": 12, "x": "rt-SECRET-2"}"#, "rt-SECRET-2 not json", ""])
  func aFileThatDoesNotHoldTokensFails(contents: String) async throws {
    try await Self.inFolder { folder in
      let url = folder.appendingPathComponent("tokens.json")
      try Data(contents.utf8).write(to: url)
      try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
      let error = await #expect(throws: TokenStorageError.self) {
        try await FileTokenStorage(url: url).load()
      }
      #expect(error?.reason == "\(url.path) does not hold tokens")
      let folderError = await #expect(throws: TokenStorageError.self) {
        try await FileTokenStorage(url: folder).load()
      }
      #expect(folderError?.reason.contains("a folder") == true)
    }
  }

  /// The JSON form uses OAuth's names, the expiry as seconds since 1970.
  @Test func theJSONFormUsesOAuthNames() throws {
    let data = try JSONEncoder.sorted().encode(Self.tokens)
    #expect(
      String(decoding: data, as: UTF8.self)
        == #"{"access_token":"at-SECRET-1","expires_at":1700003600,"#
        + #""refresh_token":"rt-SECRET-2","scope":"dogs:read"}"#)
    #expect(try JSONDecoder().decode(StoredTokens.self, from: data) == Self.tokens)
  }

  /// Printed, stored tokens and storages show which tokens there are, never their values.
  @Test func printedFormsShowNoToken() async throws {
    let memory = InMemoryTokenStorage(Self.tokens)
    let file = FileTokenStorage(url: URL(fileURLWithPath: "/tmp/tokens.json"))
    for value in [Self.tokens, memory, file] as [Any] {
      for form in printedForms(of: value) {
        #expect(!form.contains("SECRET"), "\(form)")
      }
    }
    #expect(
      Self.tokens.description
        == "stored tokens (access token expiring 2023-11-14T23:13:20Z, refresh token)")
  }

  /// The expiry is printed in UTC, computed without a formatter.
  @Test(arguments: [
    (-1.0, "1969-12-31T23:59:59Z"), (0, "1970-01-01T00:00:00Z"),
    (951_782_400, "2000-02-29T00:00:00Z"), (4_102_444_799.9, "2099-12-31T23:59:59Z"),
    (-62_135_596_800, "1-01-01T00:00:00Z"), (.nan, "at nan s since 1970"),
  ])
  func theExpiryIsPrintedInUTC(seconds: Double, text: String) {
    let tokens = StoredTokens(accessToken: "x", expiresAt: Date(timeIntervalSince1970: seconds))
    #expect(tokens.description == "stored tokens (access token expiring \(text))")
  }
}
