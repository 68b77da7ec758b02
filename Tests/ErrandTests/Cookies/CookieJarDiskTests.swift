import Errand
import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `CookieJar(persistingTo:)`: what it keeps across launches, how it writes, and what it makes of
/// a file it did not write.
@Suite(.timeLimit(.minutes(3))) struct CookieJarDiskTests {
  typealias Files = CookieJarFiles

  @Test func aNewJarOnTheFileSeesTheLastingCookiesOnly() throws {
    try Files.withFolder { folder in
      let file = folder.appendingPathComponent("cookies.json")
      let now = Files.Now()
      let jar = try Files.jar(file, now: now)
      #expect(jar.discardedFile == nil && jar.allCookies.isEmpty)
      let rejected = jar.store(
        [
          "lasting=1; Max-Age=3600; Path=/v1; Secure; HttpOnly; SameSite=Strict",
          "session=2", "brief=3; Max-Age=10", "domain=4; Domain=example.com; Max-Age=3600",
        ], from: Files.login)
      #expect(rejected.isEmpty)
      now.advance(60)

      let again = try Files.jar(file, now: now)
      #expect(again.discardedFile == nil && again.saveError == nil)
      let expected = [
        Cookie(
          name: "lasting", value: "1", domain: "api.example.com", path: "/v1",
          expires: Files.start + 3600, isSecure: true, isHTTPOnly: true, sameSite: .strict,
          created: Files.start),
        Cookie(
          name: "domain", value: "4", domain: "example.com", isHostOnly: false,
          expires: Files.start + 3600, created: Files.start),
      ]
      #expect(again.allCookies == expected)
      #expect(again.cookieHeader(for: Files.me) == "lasting=1; domain=4")
      #expect(again.fileURL?.standardizedFileURL == file.standardizedFileURL)
      #expect(jar.fileURL?.lastPathComponent == "cookies.json")
    }
  }

  @Test func aMemoryJarHasNoFile() {
    let jar = CookieJar()
    #expect(jar.fileURL == nil && jar.discardedFile == nil && jar.saveError == nil)
    #expect(jar.description == "cookie jar (0 cookies)")
  }

  @Test func cookiesExpiredByTheJarsNowAreNotLoaded() throws {
    try Files.withFolder { folder in
      let file = folder.appendingPathComponent("cookies")
      let now = Files.Now()
      try Files.jar(file, now: now).store(
        ["a=1; Max-Age=100", "b=2; Max-Age=200"], from: Files.login)
      now.advance(150)
      #expect(try Files.jar(file, now: now).allCookies.map(\.name) == ["b"])
      now.advance(50)
      #expect(try Files.jar(file, now: now).allCookies.isEmpty)
    }
  }

  @Test func theFileIs0600AndTheFoldersItMakes0700() throws {
    try Files.withFolder { folder in
      let inner = folder.appendingPathComponent("one/two")
      let file = inner.appendingPathComponent("cookies")
      try Files.jar(file).store(["a=1; Max-Age=60"], from: Files.login)
      #expect(try Files.permissions(file) == 0o600)
      #expect(try Files.permissions(inner) == 0o700)
      #expect(try Files.permissions(folder.appendingPathComponent("one")) == 0o700)
      #expect(Files.names(in: inner) == ["cookies"], "no temporary file is left")
    }
  }

  @Test func theFileHoldsNoURLAndNoValueInClear() throws {
    try Files.withFolder { folder in
      let file = folder.appendingPathComponent("cookies")
      let jar = try Files.jar(file)
      jar.store(
        ["token=s3cr3t-v4lue; Max-Age=60; Path=/"],
        from: URL(string: "https://api.example.com/login/step?code=c0de-x")!)
      let text = String(decoding: try Data(contentsOf: file), as: UTF8.self)
      for absent in ["s3cr3t-v4lue", "login", "step", "c0de-x", "https", "Max-Age"] {
        #expect(!text.contains(absent), "\(absent)")
      }
      #expect(text.contains("api.example.com") && text.contains("token"))
    }
  }

  /// Each way of removing cookies is saved before it returns.
  enum Removal: String, CaseIterable, CustomTestStringConvertible {
    case removeAll, removeWhere, expiringField
    var testDescription: String { rawValue }
  }

  @Test(arguments: Removal.allCases)
  func removingIsSaved(_ removal: Removal) throws {
    try Files.withFolder { folder in
      let file = folder.appendingPathComponent("cookies")
      let jar = try Files.jar(file)
      jar.store(["a=1; Max-Age=60", "b=2; Max-Age=60"], from: Files.login)
      switch removal {
      case .removeAll: jar.removeAll()
      case .removeWhere: jar.remove { $0.name == "a" || $0.name == "b" }
      case .expiringField: jar.store(["a=; Max-Age=0", "b=; Max-Age=0"], from: Files.login)
      }
      #expect(jar.saveError == nil)
      #expect(try Files.jar(file).allCookies.isEmpty)
    }
  }

  @Test func loadingKeepsTheJarsLimits() throws {
    try Files.withFolder { folder in
      let file = folder.appendingPathComponent("cookies")
      let now = Files.Now()
      let jar = try Files.jar(file, now: now)
      jar.store(["plain1=1; Max-Age=600", "secure=2; Max-Age=600; Secure"], from: Files.login)
      now.advance(1)
      jar.store(["plain2=3; Max-Age=600", "plain3=4; Max-Age=600"], from: Files.login)
      now.advance(1)
      jar.store(["other=5; Max-Age=600"], from: URL(string: "https://other.example.org/")!)
      now.advance(1)
      _ = jar.cookies(for: URL(string: "https://api.example.com/")!)  // all sent now
      jar.store(["later=6; Max-Age=600"], from: URL(string: "https://third.example.net/")!)

      // Two per domain: the Secure one, then the most recently sent (ties: the last stored).
      let perDomain = try Files.jar(file, now: now, limits: .init(cookiesPerDomain: 2))
      #expect(perDomain.allCookies.map(\.name) == ["secure", "plain3", "other", "later"])
      // Three in all: those not Secure and least recently sent go first.
      let inAll = try Files.jar(file, now: now, limits: .init(cookies: 3))
      #expect(inAll.allCookies.map(\.name) == ["secure", "plain3", "later"])
    }
  }

  @Test func loadingCapsALifetimeLongerThanTheJarsLimit() throws {
    try Files.withFolder { folder in
      let file = folder.appendingPathComponent("cookies")
      let far = Files.start.timeIntervalSince1970 + 1e9
      try Files.contents([Files.record(expires: far)]).writePrivately(to: file)
      let jar = try Files.jar(file, limits: .init(lifetime: .seconds(100)))
      #expect(jar.allCookies.map(\.expires) == [Files.start + 100])
    }
  }

  /// A record the jar could never have stored, beside one it could: only the second loads.
  struct Forged: Sendable, CustomTestStringConvertible {
    var name: String
    var record: @Sendable () -> [String: Any]
    var testDescription: String { name }
  }

  static let forged: [Forged] = [
    Forged(name: "domain cookie for a public suffix") {
      Files.record(domain: "co.uk", hostOnly: false)
    },
    Forged(name: "host-only cookie for a public suffix") { Files.record(domain: "github.io") },
    Forged(name: "domain cookie for com") { Files.record(domain: "com", hostOnly: false) },
    Forged(name: "domain cookie for an address") {
      Files.record(domain: "127.0.0.1", hostOnly: false)
    },
    Forged(name: "upper-case domain") { Files.record(domain: "API.example.com") },
    Forged(name: "domain with a leading dot") { Files.record(domain: ".example.com") },
    Forged(name: "empty domain") { Files.record(domain: "") },
    Forged(name: "domain with a slash") { Files.record(domain: "example.com/x") },
    Forged(name: "path without a slash") { Files.record(path: "v1") },
    Forged(name: "path with a semicolon") { Files.record(path: "/a;b") },
    Forged(name: "control character in the value") { Files.record(value: "a\u{0}b") },
    Forged(name: "semicolon in the value") { Files.record(value: "a;b") },
    Forged(name: "equals sign in the name") { Files.record(name: "a=b") },
    Forged(name: "padded name") { Files.record(name: " a") },
    Forged(name: "name and value over 4096 bytes") {
      Files.record(value: String(repeating: "v", count: 4096))
    },
    Forged(name: "neither name nor value") { Files.record(name: "", value: "") },
    Forged(name: "__Host- without Secure") { Files.record(name: "__Host-a") },
    Forged(name: "__Host- with a path") {
      Files.record(name: "__Host-a", path: "/v1", secure: true)
    },
    Forged(name: "__Secure- without Secure") { Files.record(name: "__secure-a") },
    Forged(name: "no name and a __Host- value") { Files.record(name: "", value: "__Host-x") },
    Forged(name: "SameSite=None without Secure") { Files.record(sameSite: "None") },
    Forged(name: "unknown SameSite") { Files.record(sameSite: "Sometimes") },
    Forged(name: "expired") { Files.record(expires: Files.start.timeIntervalSince1970) },
    Forged(name: "value not base64") {
      var record = Files.record()
      record["value"] = "not base64!"
      return record
    },
    Forged(name: "value not UTF-8") {
      var record = Files.record()
      record["value"] = Data([0xFF, 0xFE]).base64EncodedString()
      return record
    },
  ]

  @Test(arguments: forged)
  func aForgedCookieIsNotLoaded(_ forged: Forged) throws {
    try Files.withFolder { folder in
      let file = folder.appendingPathComponent("cookies")
      let good = Files.record(name: "good", domain: "bank.co.uk", secure: true)
      try Files.contents([forged.record(), good]).writePrivately(to: file)
      let jar = try Files.jar(file)
      #expect(jar.discardedFile == nil)
      #expect(jar.allCookies.map(\.name) == ["good"])
      #expect(jar.cookieHeader(for: URL(string: "https://other.co.uk/")!) == nil)
    }
  }

  /// A file that cannot be trusted as a whole, and why the jar says it did not load it.
  struct Hostile: Sendable, CustomTestStringConvertible {
    var name: String
    var reason: CookieFileError.Reason
    var contents: @Sendable () throws -> Data
    var testDescription: String { name }
  }

  static let hostile: [Hostile] = [
    Hostile(name: "empty", reason: .notACookieFile) { Data() },
    Hostile(name: "text", reason: .notACookieFile) { Data("cookies!".utf8) },
    Hostile(name: "bytes not UTF-8", reason: .notACookieFile) { Data([0xFF, 0x00, 0xC3, 0x28]) },
    Hostile(name: "null", reason: .notACookieFile) { Data("null".utf8) },
    Hostile(name: "an array", reason: .notACookieFile) { Data("[1,2,3]".utf8) },
    Hostile(name: "truncated", reason: .notACookieFile) {
      let whole = try Files.contents([Files.record(), Files.record(name: "b")])
      return whole.prefix(whole.count - 20)
    },
    Hostile(name: "another format", reason: .notACookieFile) {
      try Files.contents([Files.record()], format: "netscape")
    },
    Hostile(name: "another version", reason: .otherVersion) {
      try Files.contents([Files.record()], version: 2)
    },
    Hostile(name: "a record missing a field", reason: .notACookieFile) {
      var record = Files.record()
      record["expires"] = nil
      return try Files.contents([record])
    },
    Hostile(name: "a record with a field of another type", reason: .notACookieFile) {
      var record = Files.record()
      record["expires"] = "tomorrow"
      return try Files.contents([record])
    },
    Hostile(name: "nested a hundred thousand deep", reason: .notACookieFile) {
      Data(String(repeating: "[", count: 100_000).utf8)
    },
    Hostile(name: "over the largest size", reason: .tooLarge) {
      Data(repeating: 0x20, count: CookieJar.largestFile + 1)
    },
  ]

  @Test(arguments: hostile)
  func aFileThatCannotBeTrustedStartsAnEmptyJar(_ hostile: Hostile) throws {
    try Files.withFolder { folder in
      let file = folder.appendingPathComponent("cookies")
      try hostile.contents().writePrivately(to: file)
      let jar = try Files.jar(file)
      #expect(jar.discardedFile == CookieFileError(fileName: "cookies", reason: hostile.reason))
      #expect(jar.allCookies.isEmpty)
      // The next save replaces it with a file the next jar reads.
      jar.store(["a=1; Max-Age=60"], from: Files.login)
      let again = try Files.jar(file)
      #expect(again.discardedFile == nil && again.allCookies.map(\.name) == ["a"])
    }
  }

  /// What stands where the file belongs, which the jar refuses without touching it.
  enum Occupant: String, CaseIterable, CustomTestStringConvertible {
    case linkToAFile, linkToNowhere, folder, pipe
    var testDescription: String { rawValue }
  }

  @Test(arguments: Occupant.allCases)
  func aFileThatIsNotARegularOneIsRefused(_ occupant: Occupant) throws {
    try Files.withFolder { folder in
      let file = folder.appendingPathComponent("cookies")
      let target = folder.appendingPathComponent("target")
      let manager = FileManager.default
      let valid = try Files.contents([Files.record()])
      switch occupant {
      case .linkToAFile:
        try valid.writePrivately(to: target)
        try manager.createSymbolicLink(at: file, withDestinationURL: target)
      case .linkToNowhere:
        try manager.createSymbolicLink(at: file, withDestinationURL: target)
      case .folder:
        try manager.createDirectory(at: file, withIntermediateDirectories: false)
      case .pipe:
        #expect(mkfifo(file.path, 0o600) == 0)
      }
      let before = Files.names(in: folder)
      let error = #expect(throws: CookieFileError.self) { try Files.jar(file) }
      #expect(error == CookieFileError(fileName: "cookies", reason: .notARegularFile))
      #expect(Files.names(in: folder) == before)
      if occupant == .linkToAFile {
        #expect(try Data(contentsOf: target) == valid)
      }
    }
  }

  @Test func aURLThatIsNotAFileIsRefused() throws {
    let error = #expect(throws: CookieFileError.self) {
      try CookieJar(persistingTo: URL(string: "https://example.com/cookies")!)
    }
    #expect(error?.reason == .notAFileURL)
  }

  @Test func manyTasksStoringAtOnceLeaveAFileWithEveryCookie() async throws {
    let folder = FileManager.default.temporaryDirectory
      .appendingPathComponent("errand-cookie-jar-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    let file = folder.appendingPathComponent("cookies")
    let jar = try Files.jar(file, limits: .init(cookiesPerDomain: 1000))
    await withTaskGroup(of: Void.self) { group in
      for index in 0..<64 {
        group.addTask {
          jar.store(["c\(index)=\(index); Max-Age=600"], from: Files.login)
          if index.isMultiple(of: 8) { jar.remove { $0.name == "nobody" } }
        }
      }
    }
    #expect(jar.saveError == nil)
    let again = try Files.jar(file, limits: .init(cookiesPerDomain: 1000))
    #expect(Set(again.allCookies.map(\.name)) == Set((0..<64).map { "c\($0)" }))
    #expect(Files.names(in: folder) == ["cookies"])
  }

  @Test func aFailedSaveIsReportedAndTheCookiesStayInMemory() throws {
    try Files.withFolder { folder in
      let inner = folder.appendingPathComponent("inner")
      let jar = try Files.jar(inner.appendingPathComponent("cookies"))
      try FileManager.default.removeItem(at: inner)
      try Data("in the way".utf8).writePrivately(to: inner)  // the folder cannot be made again
      jar.store(["a=1; Max-Age=60"], from: Files.login)
      #expect(jar.saveError == CookieFileError(fileName: "cookies", reason: .writeFailed))
      #expect(jar.allCookies.map(\.name) == ["a"])
      try FileManager.default.removeItem(at: inner)
      jar.store(["b=2; Max-Age=60"], from: Files.login)
      #expect(jar.saveError == nil)
      #expect(try Files.jar(inner.appendingPathComponent("cookies")).allCookies.count == 2)
    }
  }

  @Test func printedFormsNameTheFileAndNoValue() throws {
    try Files.withFolder { folder in
      let jar = try Files.jar(folder.appendingPathComponent("cookies.json"))
      jar.store(["token=s3cr3t; Max-Age=60"], from: Files.login)
      #expect(jar.description == "cookie jar (1 cookie, kept in cookies.json)")
      var dumped = ""
      dump(jar, to: &dumped)
      #expect(dumped.contains("cookies.json") && !dumped.contains("s3cr3t"))
      #expect(!dumped.contains(folder.lastPathComponent), "the folder is not printed")
      let error = CookieFileError(fileName: "cookies.json", reason: .ownedByAnotherUser)
      #expect("\(error)" == "Cookie file \"cookies.json\": another user owns it")
    }
  }
}
