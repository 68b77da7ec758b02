import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// An open folder, and the file operations the disk cache makes in it: each one names a child of
/// this folder and acts on that child itself, never on what a symbolic link points to. A link
/// where a folder or a file is expected is foreign: it is not opened, and removing it removes the
/// link alone. Folders are created `0700` and files `0600`, whatever the process's umask; files
/// are written atomically (a temporary file, then a rename over the name), and a file is opened
/// for reading only when `lstat` says it is a regular file, without blocking (a named pipe must
/// never stall a lookup).
///
/// Not `Sendable`: a handle lives within one call of the disk store, under its lock.
final class DirectoryHandle {
  /// The file descriptor of the open folder.
  let descriptor: Int32

  private init(descriptor: Int32) {
    self.descriptor = descriptor
  }

  deinit {
    close(descriptor)
  }

  /// Open the folder at `path`, following a symbolic link there (the path is the app's choice),
  /// and create it (`0700`, its missing parents as `FileManager` does) when `creating`.
  /// - Parameters:
  ///   - path: The folder's path.
  ///   - creating: Whether to create the folder when it is missing.
  convenience init?(path: String, creating: Bool) {
    let flags = O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC
    var descriptor = open(path, flags)
    if descriptor < 0, errno == ENOENT, creating {
      let parent = (path as NSString).deletingLastPathComponent
      try? FileManager.default.createDirectory(
        atPath: parent, withIntermediateDirectories: true)
      let made = mkdir(path, 0o700) == 0
      descriptor = open(path, flags)
      if made, descriptor >= 0 {
        fchmod(descriptor, 0o700)
      }
    }
    guard descriptor >= 0 else { return nil }
    self.init(descriptor: descriptor)
  }

  /// What `lstat(2)` says of one name: what it is itself (a link is a link), its size and its
  /// modification time.
  struct FileStatus {
    var kind: FileKind
    var size: Int
    /// Seconds since 1970.
    var modified: Double
  }

  /// What `lstat` says of `name`, or `nil` when it is missing or cannot be inspected.
  func status(_ name: String) -> FileStatus? {
    lstatus(name).map {
      FileStatus(kind: FileKind(mode: $0.st_mode), size: Int($0.st_size), modified: $0.modified)
    }
  }

  private func lstatus(_ name: String) -> stat? {
    var info = stat()
    return fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0 ? info : nil
  }

  /// The kind of `name` itself (a link is reported as a link).
  func kind(_ name: String) -> FileKind {
    status(name)?.kind ?? .missing
  }

  /// The child folder `name`, never through a link; created (`0700`) when missing and
  /// `creating`. Anything else under that name (a link, a file) is removed first when creating.
  func folder(_ name: String, creating: Bool) -> DirectoryHandle? {
    if let folder = openFolder(name) {
      return folder
    }
    guard creating else { return nil }
    if ![.missing, .directory].contains(kind(name)) {
      remove(name)
    }
    guard mkdirat(descriptor, name, 0o700) == 0 || errno == EEXIST,
      let folder = openFolder(name)
    else { return nil }
    fchmod(folder.descriptor, 0o700)
    return folder
  }

  private func openFolder(_ name: String) -> DirectoryHandle? {
    let child = openat(
      descriptor, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
    return child < 0 ? nil : DirectoryHandle(descriptor: child)
  }

  /// The names in the folder, without `.` and `..`.
  func names() -> [String] {
    let copy = dup(descriptor)
    guard copy >= 0 else { return [] }
    guard let stream = fdopendir(copy) else {
      close(copy)
      return []
    }
    defer { closedir(stream) }
    rewinddir(stream)
    var names: [String] = []
    while let entry = readdir(stream) {
      var raw = entry.pointee.d_name
      let name = withUnsafePointer(to: &raw) {
        String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))
      }
      if name != "." && name != ".." {
        names.append(name)
      }
    }
    return names
  }

  /// What reading a file gave.
  enum Read: Equatable {
    /// The file's bytes.
    case data(Data)
    /// There is no such file.
    case missing
    /// The file is there but cannot be read now: no permission, or (on Apple platforms) a file
    /// protected while the device is locked. It is not damaged, and is left alone.
    case unreadable
    /// Not a regular file, larger than the limit, or shorter than it said: not the store's.
    case unfit
  }

  /// The contents of the regular file `name` (never through a link), if it holds at most `limit`
  /// bytes.
  func read(_ name: String, limit: Int) -> Data? {
    if case .data(let data) = readFile(name, limit: limit) { return data }
    return nil
  }

  /// Read the regular file `name` (never through a link), if it holds at most `limit` bytes, and
  /// say why not otherwise.
  func readFile(_ name: String, limit: Int) -> Read {
    guard let info = lstatus(name) else { return errno == ENOENT ? .missing : .unreadable }
    guard FileKind(mode: info.st_mode) == .regular, Int(info.st_size) <= limit else {
      return .unfit
    }
    let file = openat(descriptor, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
    guard file >= 0 else {
      switch errno {
      case ENOENT: return .missing
      case ELOOP: return .unfit
      default: return .unreadable
      }
    }
    defer { close(file) }
    var opened = stat()
    guard fstat(file, &opened) == 0 else { return .unreadable }
    guard FileKind(mode: opened.st_mode) == .regular, opened.st_ino == info.st_ino,
      opened.st_dev == info.st_dev, Int(opened.st_size) <= limit
    else { return .unfit }
    var data = Data(count: Int(opened.st_size))
    var done = 0
    var failed = false
    let complete = data.withUnsafeMutableBytes { buffer -> Bool in
      while done < buffer.count {
        let count = readBytes(file, buffer.baseAddress! + done, buffer.count - done)
        if count < 0, errno == EINTR { continue }
        if count < 0 { failed = true }
        guard count > 0 else { return false }
        done += count
      }
      return true
    }
    if complete { return .data(data) }
    return failed ? .unreadable : .unfit
  }

  /// Set the modification time of `name` itself (a link's own, never its target's) to now.
  func touch(_ name: String) {
    utimensat(descriptor, name, nil, AT_SYMLINK_NOFOLLOW)
  }

  /// Write `data` to `name` atomically, as a `0600` file: a new temporary file, then a rename
  /// over `name` (which replaces a link of that name, never what it points to).
  /// - Returns: Whether the file was written.
  @discardableResult
  func write(_ data: Data, to name: String) -> Bool {
    let temporary = Self.temporaryPrefix + String(UInt64.random(in: 0...UInt64.max), radix: 16)
    let file = openat(
      descriptor, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
    guard file >= 0 else { return false }
    fchmod(file, 0o600)
    let written = data.withUnsafeBytes { buffer -> Bool in
      var done = 0
      while done < buffer.count {
        let count = writeBytes(file, buffer.baseAddress! + done, buffer.count - done)
        if count < 0, errno == EINTR { continue }
        guard count > 0 else { return false }
        done += count
      }
      return true
    }
    close(file)
    if written, kind(name) == .directory {
      remove(name)
    }
    guard written, renameat(descriptor, temporary, descriptor, name) == 0 else {
      unlinkat(descriptor, temporary, 0)
      return false
    }
    return true
  }

  /// The prefix of the temporary files ``write(_:to:)`` makes: one left by a crash is removed
  /// when found.
  static let temporaryPrefix = ".tmp-"

  /// Remove `name`: a file, a link (the link itself) or anything else is unlinked; a folder is
  /// emptied the same way (never through a link), up to 8 levels deep, then removed.
  /// - Returns: Whether `name` is gone.
  @discardableResult
  func remove(_ name: String, depth: Int = 0) -> Bool {
    if unlinkat(descriptor, name, 0) == 0 || errno == ENOENT {
      return true
    }
    guard depth < 8, let folder = openFolder(name) else { return false }
    for child in folder.names() {
      folder.remove(child, depth: depth + 1)
    }
    return unlinkat(descriptor, name, AT_REMOVEDIR) == 0
  }

  /// Remove the folder `name` if it is empty; nothing otherwise.
  func removeIfEmpty(_ name: String) {
    unlinkat(descriptor, name, AT_REMOVEDIR)
  }

  /// Lock the regular file `name` (created `0600` when missing) with an exclusive `flock(2)`,
  /// waiting for whoever holds it; a link or anything else of that name is removed and a file
  /// made in its place. `nil` when no such file can be opened; the lock is released when the
  /// returned value goes.
  func lock(_ name: String) -> LockFile? {
    for _ in 0..<2 {
      if let info = lstatus(name), FileKind(mode: info.st_mode) != .regular {
        remove(name)
      }
      let file = openat(
        descriptor, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600)
      var info = stat()
      if file >= 0, fstat(file, &info) == 0, FileKind(mode: info.st_mode) == .regular {
        fchmod(file, 0o600)
        return LockFile(descriptor: file)
      }
      if file >= 0 {
        close(file)
      }
    }
    return nil
  }

  /// A file locked with `flock(2)`, unlocked and closed when it goes, which holds one number.
  final class LockFile {
    private let descriptor: Int32

    fileprivate init(descriptor: Int32) {
      self.descriptor = descriptor
      // A file system without `flock` leaves the file unlocked: the caller's own lock still
      // keeps its operations apart.
      while flock(descriptor, LOCK_EX) != 0, errno == EINTR {}
    }

    deinit {
      flock(descriptor, LOCK_UN)
      close(descriptor)
    }

    /// The number the file holds, as decimal text, or `nil` when it holds none.
    var number: Int? {
      var buffer = [UInt8](repeating: 0, count: 24)
      let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
      guard count > 0, count < buffer.count,
        let number = Int(String(decoding: buffer.prefix(count), as: UTF8.self)), number >= 0
      else { return nil }
      return number
    }

    /// Replace what the file holds with `number`, as decimal text.
    func write(_ number: Int) {
      let text = Array(String(number).utf8)
      guard ftruncate(descriptor, 0) == 0 else { return }
      _ = text.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
    }
  }
}

/// `read(2)`, named apart from ``DirectoryHandle/read(_:limit:)``.
private func readBytes(_ file: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
  read(file, buffer, count)
}

/// `write(2)`, named apart from ``DirectoryHandle/write(_:to:)``.
private func writeBytes(_ file: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
  write(file, buffer, count)
}

extension stat {
  /// The modification time, in seconds since 1970.
  var modified: Double {
    #if canImport(Darwin)
      Double(st_mtimespec.tv_sec) + Double(st_mtimespec.tv_nsec) / 1e9
    #else
      Double(st_mtim.tv_sec) + Double(st_mtim.tv_nsec) / 1e9
    #endif
  }
}
