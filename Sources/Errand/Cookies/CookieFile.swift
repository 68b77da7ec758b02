import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The file a ``CookieJar`` keeps its lasting cookies in: checked and read once, when the jar is
/// made, then written again, whole and atomically, after each change (a new `0600` file in the
/// same folder, renamed over the old one; a symbolic link of that name is replaced, never
/// followed). Saves are serialized by a lock of their own, apart from the jar's, and coalesced:
/// a save that waited while another wrote a state at least as new writes nothing, and neither
/// does one whose contents are those last written.
final class CookieFile: Sendable {
  let path: String
  let fileProtection: FileProtectionType
  /// Why what the file held at the start was not loaded, if it was not.
  let discarded: CookieFileError?
  /// How many saves were asked for.
  private let requests = Locked(0)
  private let saving = Locked(Saving())

  /// What the saves did: through which request the file is up to date, what it holds, and why
  /// the last write failed.
  private struct Saving {
    var through = 0
    var written: Data?
    var error: CookieFileError?
  }

  private init(path: String, fileProtection: FileProtectionType, discarded: CookieFileError?) {
    self.path = path
    self.fileProtection = fileProtection
    self.discarded = discarded
  }

  /// The file's name, the last component of its path.
  var name: String { (path as NSString).lastPathComponent }
  private var folderPath: String { (path as NSString).deletingLastPathComponent }

  /// Why the last save failed, or `nil` when it succeeded (or none was needed yet).
  var saveError: CookieFileError? { saving.withLock { $0.error } }

  /// Open the file at `url` for a jar: create its folder (`0700`, with any missing parents) if
  /// needed, refuse a file that cannot be used safely, and read the cookies it holds that the
  /// jar could have stored and that have not expired at `now`.
  /// - Throws: ``CookieFileError`` when the URL names no file, the folder cannot be made or
  ///   opened or every user may write to it (and it is not sticky), or the file is not a regular
  ///   one, another user owns it, or it cannot be read now.
  /// - Returns: The file, and the cookies it held with when each was last sent, in the order
  ///   they were first stored; none when the file was missing or held nothing to trust (then
  ///   ``discarded`` says why).
  static func open(
    _ url: URL, fileProtection: FileProtectionType, now: Date, limits: CookieJar.Limits,
    publicSuffixes: PublicSuffixList
  ) throws(CookieFileError) -> (CookieFile, [(cookie: Cookie, lastAccess: Date)]) {
    let path = url.standardizedFileURL.path(percentEncoded: false)
    let name = (path as NSString).lastPathComponent
    guard url.isFileURL, !["", ".", "..", "/"].contains(name) else {
      throw CookieFileError(fileName: name, reason: .notAFileURL)
    }
    func fail(_ reason: CookieFileError.Reason) -> CookieFileError {
      CookieFileError(fileName: name, reason: reason)
    }
    let folderPath = (path as NSString).deletingLastPathComponent
    makeFolders(folderPath, fileProtection: fileProtection)
    guard let folder = DirectoryHandle(path: folderPath, creating: false) else {
      throw fail(.folderUnavailable)
    }
    var folderInfo = stat()
    guard fstat(folder.descriptor, &folderInfo) == 0 else { throw fail(.folderUnavailable) }
    // Every user may write, and none may only remove their own (`o+w` without the sticky bit).
    if folderInfo.st_mode & 0o002 != 0, folderInfo.st_mode & 0o1000 == 0 {
      throw fail(.folderWritableByOthers)
    }
    var info = stat()
    guard fstatat(folder.descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
      if errno == ENOENT {
        return (CookieFile(path: path, fileProtection: fileProtection, discarded: nil), [])
      }
      throw fail(.unreadable)
    }
    guard FileKind(mode: info.st_mode) == .regular else { throw fail(.notARegularFile) }
    guard info.st_uid == geteuid() else { throw fail(.ownedByAnotherUser) }
    var problem: CookieFileError.Reason?
    var cookies: [(cookie: Cookie, lastAccess: Date)] = []
    if info.st_mode & 0o022 != 0 {
      problem = .writableByOthers
    } else if Int(info.st_size) > CookieJar.largestFile {
      problem = .tooLarge
    } else {
      switch folder.readFile(name, limit: CookieJar.largestFile) {
      case .missing: break
      case .unreadable: throw fail(.unreadable)
      case .unfit: problem = .notACookieFile
      case .data(let data):
        let decoded = decode(data)
        problem = decoded.problem
        cookies = decoded.records.compactMap {
          $0.cookie(now: now, limits: limits, publicSuffixes: publicSuffixes)
        }
      }
    }
    let file = CookieFile(
      path: path, fileProtection: fileProtection, discarded: problem.map(fail))
    return (file, cookies)
  }

  /// The records `data` holds, or none and why.
  private static func decode(_ data: Data) -> (
    records: [CookieFileRecord], problem: CookieFileError.Reason?
  ) {
    guard let contents = try? JSONDecoder().decode(CookieFileContents.self, from: data),
      contents.format == CookieFileContents.format
    else { return ([], .notACookieFile) }
    guard contents.version == CookieFileContents.version else { return ([], .otherVersion) }
    return (contents.cookies, nil)
  }

  /// Create `path` and its missing parents, each `0700` whatever the umask (and, on Apple
  /// platforms, with the file protection class, which files made in it take).
  private static func makeFolders(_ path: String, fileProtection: FileProtectionType) {
    var missing: [String] = []
    var next = path
    while !next.isEmpty, next != "/", FileKind(atPath: next, following: true) == .missing {
      missing.append(next)
      next = (next as NSString).deletingLastPathComponent
    }
    for folder in missing.reversed() where mkdir(folder, 0o700) == 0 {
      chmod(folder, 0o700)
      #if canImport(Darwin)
        try? FileManager.default.setAttributes(
          [.protectionKey: fileProtection], ofItemAtPath: folder)
      #endif
    }
  }

  /// Write what `state` holds that outlives the process, unless a save that began after this
  /// one was asked for already did, or the file holds it already.
  /// - Parameters:
  ///   - state: The jar's cookies.
  ///   - now: The jar's current date: cookies expired by then are not written.
  func save(_ state: Locked<CookieStore>, now: Date) {
    let request = requests.withLock {
      $0 += 1
      return $0
    }
    saving.withLock { saving in
      guard saving.through < request else { return }
      // Every change asked to be saved up to `through` is in what is read next.
      let through = requests.withLock { $0 }
      let entries = state.withLock { store in
        store.entries.values.filter { $0.cookie.expires.map { $0 > now } ?? false }
      }
      let data = Self.encode(entries)
      if data != saving.written || saving.error != nil {
        guard write(data) else {
          saving.error = CookieFileError(fileName: name, reason: .writeFailed)
          return
        }
        saving.written = data
        saving.error = nil
      }
      saving.through = through
    }
  }

  /// Write `data` over the file, atomically and `0600`; a folder of that name is left alone.
  private func write(_ data: Data) -> Bool {
    guard let folder = DirectoryHandle(path: folderPath, creating: true),
      folder.kind(name) != .directory, folder.write(data, to: name)
    else { return false }
    #if canImport(Darwin)
      try? FileManager.default.setAttributes([.protectionKey: fileProtection], ofItemAtPath: path)
    #endif
    return true
  }

  /// The file's contents for `entries`, in the order they were first stored, within
  /// ``CookieJar/largestFile``: when they would not fit, those a jar evicts first (not `Secure`,
  /// then least recently sent) are left out, a tenth at a time.
  static func encode(_ entries: [CookieStore.Entry]) -> Data {
    var kept = entries.sorted { $0.order < $1.order }
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    while true {
      let contents = CookieFileContents(cookies: kept.compactMap(CookieFileRecord.init))
      let data = try? encoder.encode(contents)
      if let data, data.count <= CookieJar.largestFile || kept.isEmpty {
        return data
      }
      guard !kept.isEmpty else { return Data() }
      let evicted = Set(
        kept.sorted { a, b in
          if a.cookie.isSecure != b.cookie.isSecure { return !a.cookie.isSecure }
          if a.lastAccess != b.lastAccess { return a.lastAccess < b.lastAccess }
          return a.order < b.order
        }.prefix(max(1, kept.count / 10)).map(\.order))
      kept.removeAll { evicted.contains($0.order) }
    }
  }
}
