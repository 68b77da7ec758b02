import Errand
import Foundation
import Testing

/// What the tests of a jar's file share: a folder of their own, a clock to move, and cookie
/// files written by hand.
enum CookieJarFiles {
  static let start = Date(timeIntervalSince1970: 1_800_000_000)
  static let login = URL(string: "https://api.example.com/login")!
  static let me = URL(string: "https://api.example.com/v1/me")!

  /// A fresh folder under the temporary directory, removed afterwards.
  static func withFolder(_ body: (URL) throws -> Void) throws {
    let folder = FileManager.default.temporaryDirectory
      .appendingPathComponent("errand-cookie-jar-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    // 0755 whatever the process's umask, which a disk cache test may have set to 0 meanwhile
    // (a folder every user can write to is refused, rightly).
    try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder.path)
    try body(folder)
  }

  /// A date a test moves forward.
  final class Now: Sendable {
    private let date = Locked(CookieJarFiles.start)
    var read: @Sendable () -> Date { { self.date.withLock { $0 } } }
    func advance(_ seconds: TimeInterval) { date.withLock { $0 += seconds } }
  }

  /// A jar on `file`, on `now`.
  static func jar(
    _ file: URL, now: Now = Now(), limits: CookieJar.Limits = .init()
  ) throws -> CookieJar {
    try CookieJar(persistingTo: file, limits: limits, now: now.read)
  }

  /// One record as the jar writes it, the value given in clear and encoded here.
  static func record(
    name: String = "a", value: String = "1", domain: String = "api.example.com",
    hostOnly: Bool = true, path: String = "/", expires: Double = start.timeIntervalSince1970 + 3600,
    secure: Bool = false, httpOnly: Bool = false, sameSite: String = "Default",
    created: Double = start.timeIntervalSince1970, lastAccess: Double = start.timeIntervalSince1970
  ) -> [String: Any] {
    [
      "name": name, "value": Data(value.utf8).base64EncodedString(), "domain": domain,
      "hostOnly": hostOnly, "path": path, "expires": expires, "secure": secure,
      "httpOnly": httpOnly, "sameSite": sameSite, "created": created, "lastAccess": lastAccess,
    ]
  }

  /// A file's contents holding `records`.
  static func contents(
    _ records: [[String: Any]], format: String = "errand-cookie-jar", version: Int = 1
  ) throws -> Data {
    try JSONSerialization.data(
      withJSONObject: ["format": format, "version": version, "cookies": records])
  }

  /// The POSIX permissions of the item at `url` itself.
  static func permissions(_ url: URL) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
    return try #require((attributes[.posixPermissions] as? NSNumber)?.intValue)
  }

  /// The names in `folder`.
  static func names(in folder: URL) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
  }
}

extension Data {
  /// Write to `url` as `0600`, whatever the process's umask (a disk cache test sets it to 0 for
  /// a moment, and a file others may write is rightly not trusted).
  func writePrivately(to url: URL) throws {
    try write(to: url)
    try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
  }
}
