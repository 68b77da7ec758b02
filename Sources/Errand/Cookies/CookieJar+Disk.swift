import Foundation

extension CookieJar {
  /// The most bytes a jar's file holds: a larger file is not read (the jar starts empty), and
  /// when the lasting cookies would take more, those a jar evicts first are kept in memory only.
  public static let largestFile = 8 * 1024 * 1024

  /// A jar that keeps its lasting cookies in `file` across launches: the cookies it holds are
  /// loaded now, and it is saved after each change.
  ///
  /// ```swift
  /// let support = try FileManager.default.url(
  ///   for: .applicationSupportDirectory, in: .userDomainMask, appropriateFor: nil, create: true)
  /// let jar = try CookieJar(persistingTo: support.appendingPathComponent("api-cookies"))
  /// ```
  ///
  /// **What is kept.** Only cookies with an expiry (`Expires` or `Max-Age`) are written; session
  /// cookies live as long as the jar, as a browser's do until it quits. Each cookie is written
  /// with its name, value, domain, path, flags, expiry, creation and last use: no URL, no
  /// header. Values are base64, so that searching the disk for one does not find it; the file is
  /// not encrypted. It is protected by its permissions (`0600`, and `0700` for each folder the jar
  /// creates, whatever the umask) and, on Apple platforms, by `fileProtection`.
  ///
  /// **Loading.** A missing file is an empty jar. Every cookie read is checked as a `Set-Cookie`
  /// field is (sizes, prefixes, `Secure` rules) and against `publicSuffixes` (a cookie for a
  /// public suffix, host-only or not, is not loaded); expired ones are dropped on `now`, and
  /// the rest kept within `limits` as the jar evicts. A file that cannot be trusted as a whole
  /// (corrupted, truncated, another format version, larger than ``largestFile``, writable by other
  /// users) is not read: the jar starts empty, ``discardedFile`` says why, and the next save
  /// replaces it.
  ///
  /// **Saving.** After each ``store(_:from:)`` that stored a cookie, ``remove(where:)`` and
  /// ``removeAll()``, on the caller's thread, before the call returns: the whole file, written to
  /// a temporary file in the same folder and renamed over it, so that a crash leaves the old file
  /// or the new one. Saves wait for each other under a lock of their own, not the jar's (reading
  /// cookies never waits for the disk); one that waited while another wrote what it would write
  /// writes nothing. When the last lasting cookies were sent is saved with the next change. A save
  /// that fails leaves the cookies in memory, and ``saveError`` says so.
  ///
  /// One jar per file: two jars on the same file each write what they hold, and the file holds
  /// whichever saved last.
  ///
  /// - Parameters:
  ///   - file: A `file:` URL for the file, your app's choice of name. Its folder is created if it
  ///     is missing, and may be a symbolic link; the file itself may not be.
  ///   - fileProtection: On Apple platforms, the data protection class of the file (and of the
  ///     folders the jar creates): `.completeUntilFirstUserAuthentication` by default, readable
  ///     from the first unlock after a restart, background launches included. Ignored elsewhere.
  ///   - publicSuffixes: The public suffixes no cookie may be set for, also when loading.
  ///   - limits: How much the jar keeps, also when loading.
  ///   - now: The current date; the system's by default.
  /// - Throws: ``CookieFileError`` when the file cannot be used safely: the URL is not a file
  ///   URL, its folder cannot be created or opened or every user may write to it (and it is not
  ///   sticky), the file is not a regular file (a symbolic link, which is never followed, a
  ///   folder, a pipe), another user owns it, or it cannot be read now (no permission; on Apple
  ///   platforms, a protected file while the device is locked). The file is then left as it is.
  ///   What a file holds never makes this throw.
  public convenience init(
    persistingTo file: URL,
    fileProtection: FileProtectionType = .completeUntilFirstUserAuthentication,
    publicSuffixes: PublicSuffixList = .bundled, limits: Limits = Limits(),
    now: @escaping @Sendable () -> Date = { Date() }
  ) throws(CookieFileError) {
    let (opened, cookies) = try CookieFile.open(
      file, fileProtection: fileProtection, now: now(), limits: limits,
      publicSuffixes: publicSuffixes)
    self.init(publicSuffixes: publicSuffixes, limits: limits, now: now, file: opened)
    state.withLock { $0.restore(cookies, limits: limits) }
  }

  /// The file the jar keeps its lasting cookies in, or `nil` for a jar in memory only.
  public var fileURL: URL? {
    file.map { URL(fileURLWithPath: $0.path) }
  }

  /// Why the jar did not load what its file held when it was made (it started empty), or `nil`
  /// when it loaded it, there was no file, or the jar has none.
  public var discardedFile: CookieFileError? {
    file?.discarded
  }

  /// Why the last save to the jar's file failed, or `nil` once one succeeds (and for a jar in
  /// memory only). The cookies are in memory either way.
  public var saveError: CookieFileError? {
    file?.saveError
  }
}
