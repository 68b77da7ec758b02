import Errand
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Hostile probes of a jar's file (`CookieJar(persistingTo:)`): each asserts the safe behaviour,
/// so a failure is a finding. Leaks into printed forms, files the jar does not own, odd input,
/// growth without bound, and one jar's cookies reaching another.
@Suite(.timeLimit(.minutes(3))) struct CookieJarDiskHostileTests {
  typealias Files = CookieJarFiles

  // MARK: Printed forms

  @Test func noPrintedFormShowsAValueOrTheFolder() throws {
    try Files.withFolder { folder in
      let file = folder.appendingPathComponent("jar")
      try Data("garbage s3cr3t".utf8).writePrivately(to: file)
      let jar = try Files.jar(file)
      jar.store(["session=s3cr3t; Max-Age=60", "s3cr3t"], from: Files.login)
      try FileManager.default.removeItem(at: folder)
      try Data().writePrivately(to: folder)  // the next save fails
      jar.store(["other=s3cr3t; Max-Age=60"], from: Files.login)
      defer { try? FileManager.default.removeItem(at: folder) }
      var printed = [
        jar.description, String(reflecting: jar), "\(jar.allCookies)",
        "\(String(describing: jar.discardedFile))", "\(String(describing: jar.saveError))",
      ]
      var dumped = ""
      dump(jar, to: &dumped)
      printed.append(dumped)
      for text in printed {
        #expect(!text.contains("s3cr3t"), "\(text)")
        #expect(!text.contains(folder.lastPathComponent), "\(text)")
      }
      #expect(jar.discardedFile?.reason == .notACookieFile)
      #expect(jar.saveError?.reason == .writeFailed)
    }
  }

  // MARK: Files the jar does not own

  @Test func aLinkPlantedAfterTheJarWasMadeIsReplacedNeverFollowed() throws {
    try Files.withFolder { folder in
      let file = folder.appendingPathComponent("jar")
      let victim = folder.appendingPathComponent("victim")
      try Data("precious".utf8).writePrivately(to: victim)
      let jar = try Files.jar(file)
      try FileManager.default.createSymbolicLink(at: file, withDestinationURL: victim)
      jar.store(["a=1; Max-Age=60"], from: Files.login)
      #expect(jar.saveError == nil)
      #expect(try Data(contentsOf: victim) == Data("precious".utf8))
      #expect(FileKind(atPath: file.path, following: false) == .regular)
      #expect(try Files.permissions(file) == 0o600)
    }
  }

  @Test func aFolderPlantedWhereTheFileGoesIsLeftWhole() throws {
    try Files.withFolder { folder in
      let file = folder.appendingPathComponent("jar")
      let jar = try Files.jar(file)
      try FileManager.default.createDirectory(at: file, withIntermediateDirectories: false)
      try Data("kept".utf8).writePrivately(to: file.appendingPathComponent("inside"))
      jar.store(["a=1; Max-Age=60"], from: Files.login)
      #expect(jar.saveError?.reason == .writeFailed)
      #expect(try Data(contentsOf: file.appendingPathComponent("inside")) == Data("kept".utf8))
    }
  }

  @Test func aFileAnotherUserPlantedIsRefused() throws {
    // Only root can give a file to another user; tests run as root in Linux containers.
    guard geteuid() == 0 else { return }
    try Files.withFolder { folder in
      let file = folder.appendingPathComponent("jar")
      let planted = try Files.contents([Files.record(name: "planted")])
      try planted.writePrivately(to: file)
      chmod(file.path, 0o600)
      #expect(chown(file.path, 65534, 65534) == 0)
      let error = #expect(throws: CookieFileError.self) { try Files.jar(file) }
      #expect(error?.reason == .ownedByAnotherUser)
      #expect(try Data(contentsOf: file) == planted)
    }
  }

  @Test(arguments: [(0o777, true), (0o1777, false), (0o775, false)])
  func aFolderEveryUserMayWriteToIsRefusedUnlessSticky(mode: Int, refused: Bool) throws {
    try Files.withFolder { folder in
      let shared = folder.appendingPathComponent("shared")
      try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: false)
      chmod(shared.path, mode_t(mode))
      let file = shared.appendingPathComponent("jar")
      if refused {
        let error = #expect(throws: CookieFileError.self) { try Files.jar(file) }
        #expect(error?.reason == .folderWritableByOthers)
      } else {
        #expect(try Files.jar(file).discardedFile == nil)
      }
    }
  }

  @Test func aFileOthersMayWriteIsNotTrustedAndIsReplaced() throws {
    try Files.withFolder { folder in
      let file = folder.appendingPathComponent("jar")
      try Files.contents([Files.record(name: "planted")]).writePrivately(to: file)
      chmod(file.path, 0o666)
      let jar = try Files.jar(file)
      #expect(jar.discardedFile?.reason == .writableByOthers && jar.allCookies.isEmpty)
      jar.store(["a=1; Max-Age=60"], from: Files.login)
      #expect(try Files.permissions(file) == 0o600)
    }
  }

  @Test func aFileThatCannotBeReadNowIsRefusedAndLeftAlone() throws {
    try Files.withFolder { folder in
      let file = folder.appendingPathComponent("jar")
      let contents = try Files.contents([Files.record()])
      try contents.writePrivately(to: file)
      chmod(file.path, 0)
      let error = try DiskCacheUnreadableTests.withoutPermissionToRead {
        #expect(throws: CookieFileError.self) { try Files.jar(file) }
      }
      #expect(error?.reason == .unreadable)
      chmod(file.path, 0o600)
      #expect(try Data(contentsOf: file) == contents)
    }
  }

  // MARK: Odd input

  static let oddInput: [String] = [
    // Dates far out, or beyond a Double (read as infinities or refused).
    #"{"format":"errand-cookie-jar","version":1,"cookies":[{"name":"a","value":"MQ==","domain":"api.example.com","hostOnly":true,"path":"/","expires":1e308,"secure":false,"httpOnly":false,"sameSite":"Default","created":-1e308,"lastAccess":1e308}]}"#,
    #"{"format":"errand-cookie-jar","version":1,"cookies":[{"name":"a","value":"MQ==","domain":"api.example.com","hostOnly":true,"path":"/","expires":1e400,"secure":false,"httpOnly":false,"sameSite":"Default","created":-1e400,"lastAccess":-1e400}]}"#,
    // Duplicate keys, an integer overflowing, nested objects where strings belong.
    #"{"format":"errand-cookie-jar","format":"x","version":1,"cookies":[]}"#,
    #"{"format":"errand-cookie-jar","version":99999999999999999999999,"cookies":[]}"#,
    #"{"format":"errand-cookie-jar","version":1,"cookies":[{"name":{"name":{"name":{}}}}]}"#,
    String(repeating: #"{"a":"#, count: 200_000),
    String(repeating: "[", count: 1_000_000),
    "\u{FEFF}" + String(repeating: "\u{0}", count: 1000),
  ]

  @Test(arguments: oddInput.indices)
  func oddInputNeverCrashes(_ index: Int) throws {
    try Files.withFolder { folder in
      let file = folder.appendingPathComponent("jar")
      try Data(Self.oddInput[index].utf8).writePrivately(to: file)
      let jar = try Files.jar(file)
      for cookie in jar.allCookies {
        #expect(cookie.expires.map { $0 <= Files.start + 34_560_000 } ?? false)
        #expect(cookie.created <= Files.start)
      }
      jar.store(["b=2; Max-Age=60"], from: Files.login)
      #expect(jar.saveError == nil)
      #expect(try Files.jar(file).discardedFile == nil)
    }
  }

  // MARK: Growth

  @Test(.ownThread) func aFileOfAsManyCookiesAsFitLoadsWithinTheJarsLimit() throws {
    try Files.withFolder { folder in
      let file = folder.appendingPathComponent("jar")
      // Written as text: building it with JSONSerialization takes longer than loading it.
      let records = (0..<35_000).map { index in
        #"{"name":"c","value":"MQ==","domain":"h\#(index).example.com","hostOnly":true,"path":"/","#
          + #""expires":1800003600,"secure":false,"httpOnly":false,"sameSite":"Default","#
          + #""created":1800000000,"lastAccess":1800000000}"#
      }
      let data = Data(
        (#"{"format":"errand-cookie-jar","version":1,"cookies":["#
          + records.joined(separator: ",") + "]}").utf8)
      #expect(data.count <= CookieJar.largestFile)
      try data.writePrivately(to: file)
      // A quadratic load would not end within the suite's time limit.
      let jar = try Files.jar(file)
      #expect(jar.allCookies.count == 3000)
    }
  }

  @Test(.ownThread) func aFileOfOneCookieRepeatedLoadsOne() throws {
    try Files.withFolder { folder in
      let file = folder.appendingPathComponent("jar")
      try Files.contents(Array(repeating: Files.record(), count: 10_000)).writePrivately(to: file)
      #expect(try Files.jar(file).allCookies.count == 1)
    }
  }

  @Test(.ownThread) func aHugeValueIsNotLoaded() throws {
    try Files.withFolder { folder in
      let file = folder.appendingPathComponent("jar")
      let huge = Files.record(name: "huge", value: String(repeating: "v", count: 5_000_000))
      try Files.contents([huge, Files.record(name: "small")]).writePrivately(to: file)
      #expect(try Files.jar(file).allCookies.map(\.name) == ["small"])
    }
  }

  @Test func aSparseFileOfATerabyteIsNotRead() throws {
    try Files.withFolder { folder in
      let file = folder.appendingPathComponent("jar")
      #expect(
        FileManager.default.createFile(
          atPath: file.path, contents: nil, attributes: [.posixPermissions: 0o600]))
      #expect(truncate(file.path, 1 << 40) == 0)
      // Reading it would not end within the suite's time limit.
      let jar = try Files.jar(file)
      #expect(jar.discardedFile?.reason == .tooLarge)
    }
  }

  @Test(.ownThread) func theFileNeverGrowsPastTheLargestSize() throws {
    try Files.withFolder { folder in
      let file = folder.appendingPathComponent("jar")
      let limits = CookieJar.Limits(cookiesPerDomain: 100_000, cookies: 100_000)
      let jar = try Files.jar(file, limits: limits)
      let value = String(repeating: "v", count: 4000)
      let fields = (0..<1700).map { "c\($0)=\(value); Max-Age=600\($0 < 10 ? "; Secure" : "")" }
      #expect(jar.store(fields, from: Files.login).isEmpty)
      let size = try #require(
        FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)
      #expect(size.intValue <= CookieJar.largestFile)
      let again = try Files.jar(file, limits: limits)
      #expect(again.discardedFile == nil)
      #expect(again.allCookies.count > 1000 && again.allCookies.count < 1700)
      #expect(Set((0..<10).map { "c\($0)" }).isSubset(of: again.allCookies.map(\.name)))
      #expect(jar.allCookies.count == 1700, "in memory, every cookie")
    }
  }

  // MARK: One jar's cookies reaching another

  @Test func jarsOnTwoFilesShareNothing() throws {
    try Files.withFolder { folder in
      let first = try Files.jar(folder.appendingPathComponent("first"))
      let second = try Files.jar(folder.appendingPathComponent("second"))
      first.store(["a=1; Max-Age=60"], from: Files.login)
      second.store(["b=2; Max-Age=60"], from: Files.login)
      #expect(
        try Files.jar(folder.appendingPathComponent("second")).allCookies.map(\.name) == ["b"])
      first.removeAll()
      #expect(
        try Files.jar(folder.appendingPathComponent("second")).allCookies.map(\.name) == ["b"])
      #expect(CookieJar().allCookies.isEmpty)
    }
  }

  @Test func aLoadedCookieKeepsWhereItMayGo() throws {
    try Files.withFolder { folder in
      let file = folder.appendingPathComponent("jar")
      try Files.jar(file).store(
        ["host=1; Max-Age=60", "secure=2; Max-Age=60; Secure", "deep=3; Max-Age=60; Path=/v1"],
        from: Files.login)
      let jar = try Files.jar(file)
      #expect(jar.cookieHeader(for: URL(string: "https://sub.api.example.com/v1")!) == nil)
      #expect(jar.cookieHeader(for: URL(string: "https://example.com/v1")!) == nil)
      #expect(jar.cookieHeader(for: URL(string: "http://api.example.com/")!) == "host=1")
      #expect(jar.cookieHeader(for: Files.me) == "deep=3; host=1; secure=2")
    }
  }
}
