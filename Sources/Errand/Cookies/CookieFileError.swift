import Foundation

/// Why a ``CookieJar`` refused the file it was asked to keep its cookies in, why it did not load
/// what the file held, or why saving to it failed. Names the file (its last path component), never
/// its folder, a URL or a cookie.
///
/// ``CookieJar/init(persistingTo:fileProtection:publicSuffixes:limits:now:)`` throws it when the
/// file cannot be used safely (a symbolic link, a folder, a file another user owns, one that
/// cannot be read now); ``CookieJar/discardedFile`` holds it when the file was read but held
/// nothing the jar could trust (the jar then starts empty); ``CookieJar/saveError`` when the last
/// save failed.
public struct CookieFileError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What was wrong with the file.
  public struct Reason: Sendable, Hashable, CustomStringConvertible {
    let text: String

    /// The URL is not a `file:` URL naming a file.
    public static let notAFileURL = Reason(text: "its URL is not a file URL naming a file")
    /// Its folder cannot be opened or created.
    public static let folderUnavailable = Reason(text: "its folder cannot be opened or created")
    /// Its folder can be written by every user and is not sticky, so another user could replace
    /// the file.
    public static let folderWritableByOthers = Reason(
      text: "its folder can be written by every user and is not sticky")
    /// It is a symbolic link, a folder, a pipe or a device: not a regular file. A link is never
    /// followed.
    public static let notARegularFile = Reason(text: "it is not a regular file")
    /// Another user owns it.
    public static let ownedByAnotherUser = Reason(text: "another user owns it")
    /// It is there but cannot be read now: no permission or, on Apple platforms, a protected file
    /// while the device is locked. It is left as it is.
    public static let unreadable = Reason(text: "it cannot be read now")
    /// It is larger than a cookie file may be (``CookieJar/largestFile`` bytes).
    public static let tooLarge = Reason(text: "it is larger than a cookie file may be")
    /// Other users may write to it, so what it holds is not trusted.
    public static let writableByOthers = Reason(text: "other users may write to it")
    /// It is not a cookie file Errand reads: corrupted, truncated, or something else.
    public static let notACookieFile = Reason(text: "it is not a cookie file Errand can read")
    /// It was written in another version of the format.
    public static let otherVersion = Reason(text: "it is in another version of the format")
    /// Writing it failed (the folder is gone or full, say); the cookies are still in memory.
    public static let writeFailed = Reason(text: "it could not be written")

    /// The reason, as a clause: `another user owns it`.
    public var description: String { text }
  }

  /// The file's name: the last component of its path.
  public var fileName: String
  /// What was wrong.
  public var reason: Reason

  /// An error about a cookie file.
  /// - Parameters:
  ///   - fileName: The file's name.
  ///   - reason: What was wrong.
  public init(fileName: String, reason: Reason) {
    self.fileName = fileName
    self.reason = reason
  }

  /// `Cookie file "cookies.json": another user owns it`.
  public var description: String {
    let shown = fileName.count > 64 ? String(fileName.prefix(64)) + "…" : fileName
    return "Cookie file \"\(shown)\": \(reason)"
  }
}
