import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// A ``TokenStorage`` in a file: the tokens as JSON, readable and writable by the user alone.
///
/// Each save writes a new file with permissions `0600` next to the old one, then renames it over
/// the name, so that a crash never leaves half a file and no other user can read the tokens at
/// any moment. On Apple platforms prefer the keychain (see "Authentication and Retries" in the
/// documentation); a file suits command-line tools and servers.
///
/// As the cookie jar's file, a token file is used only when no other user can have written it:
/// its folder may not be writable by every user (unless it is sticky, as `/tmp` is), and the file
/// must be a regular file (a symbolic link is never followed, a pipe never opened), owned by the
/// user, and writable by no one else. Otherwise another user could plant their own tokens, and
/// the app would act on their account.
///
/// ```swift
/// let storage = FileTokenStorage(url: appSupport.appendingPathComponent("tokens.json"))
/// ```
///
/// No printed form shows the file's contents; errors name the file and what went wrong.
public struct FileTokenStorage: TokenStorage, CustomStringConvertible {
  /// The file that holds the tokens.
  public let url: URL

  /// The largest file read, in bytes: tokens are a few kilobytes at most.
  static let maximumSize = 1 << 20

  /// A storage in the file at `url`, which need not exist yet; its folder must.
  /// - Parameter url: A file URL.
  public init(url: URL) {
    self.url = url
  }

  private var name: String { url.lastPathComponent }

  /// The file's folder, opened (following a link there: the path is the app's choice), once it
  /// is known that not every user may write to it; `nil` when it is missing.
  private func folder() throws -> DirectoryHandle? {
    let path = url.deletingLastPathComponent().path
    guard let folder = DirectoryHandle(path: path, creating: false) else {
      if errno == ENOENT { return nil }
      throw TokenStorageError(reason: "\(path) could not be opened (errno \(errno))")
    }
    var info = stat()
    guard fstat(folder.descriptor, &info) == 0 else {
      throw TokenStorageError(reason: "\(path) could not be opened (errno \(errno))")
    }
    if info.st_mode & 0o002 != 0, info.st_mode & 0o1000 == 0 {
      throw TokenStorageError(reason: "\(path) may be written by every user")
    }
    return folder
  }

  /// The tokens in the file, or `nil` when there is no file.
  /// - Throws: ``TokenStorageError`` when the file's folder may be written by every user, the
  ///   file is not a regular file, is owned by another user or writable by others, is too large
  ///   or does not hold tokens (never quoting it).
  public func load() async throws -> StoredTokens? {
    guard let folder = try folder() else { return nil }
    var info = stat()
    guard fstatat(folder.descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
      if errno == ENOENT { return nil }
      throw TokenStorageError(reason: "\(url.path) could not be read")
    }
    let kind = FileKind(mode: info.st_mode)
    guard kind == .regular else {
      throw TokenStorageError(reason: "\(url.path) is \(kind.description), not a file of tokens")
    }
    guard info.st_uid == geteuid() else {
      throw TokenStorageError(reason: "\(url.path) is owned by another user")
    }
    guard info.st_mode & 0o022 == 0 else {
      throw TokenStorageError(reason: "\(url.path) may be written by other users")
    }
    guard Int(info.st_size) <= Self.maximumSize else {
      throw TokenStorageError(reason: "\(url.path) is larger than \(Self.maximumSize) bytes")
    }
    // Opened without following a link or waiting on a pipe, and checked to be the file just
    // inspected: one swapped in meanwhile is not read.
    let data: Data
    switch folder.readFile(name, limit: Self.maximumSize) {
    case .missing: return nil
    case .data(let read): data = read
    case .unreadable, .unfit:
      throw TokenStorageError(reason: "\(url.path) could not be read")
    }
    do {
      return try JSONDecoder().decode(StoredTokens.self, from: data)
    } catch {
      throw TokenStorageError(reason: "\(url.path) does not hold tokens")
    }
  }

  /// Write `tokens` to the file atomically, with permissions `0600`.
  /// - Parameter tokens: The tokens to keep.
  /// - Throws: ``TokenStorageError`` when the tokens cannot be encoded (an expiry that is not a
  ///   finite number), the folder may be written by every user, or the file cannot be written.
  public func save(_ tokens: StoredTokens) async throws {
    let data: Data
    do {
      data = try JSONEncoder().encode(tokens)
    } catch {
      throw TokenStorageError(reason: "the tokens for \(url.path) could not be encoded")
    }
    guard let folder = try folder() else {
      throw TokenStorageError(reason: "\(url.path) could not be written (errno \(ENOENT))")
    }
    let temporary = ".\(name).\(UUID().uuidString).tmp"
    let file = openat(
      folder.descriptor, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
    guard file >= 0 else {
      throw TokenStorageError(reason: "\(url.path) could not be written (errno \(errno))")
    }
    // The umask may only narrow 0600; fchmod makes it exactly that.
    fchmod(file, 0o600)
    let written = data.withUnsafeBytes { bytes -> Bool in
      var offset = 0
      while offset < bytes.count {
        let count = write(file, bytes.baseAddress! + offset, bytes.count - offset)
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { return false }
        offset += count
      }
      return true
    }
    let synced = fsync(file) == 0
    close(file)
    guard written, synced, renameat(folder.descriptor, temporary, folder.descriptor, name) == 0
    else {
      let code = errno
      unlinkat(folder.descriptor, temporary, 0)
      throw TokenStorageError(reason: "\(url.path) could not be written (errno \(code))")
    }
  }

  /// Delete the file; nothing happens when there is none.
  /// - Throws: ``TokenStorageError`` when it exists and cannot be deleted.
  public func remove() async throws {
    guard unlink(url.path) == 0 || errno == ENOENT else {
      throw TokenStorageError(reason: "\(url.path) could not be deleted (errno \(errno))")
    }
  }

  /// `tokens in /path/tokens.json`, never its contents.
  public var description: String { "tokens in \(url.path)" }
}

/// A ``TokenStorage`` could not load, save or remove the tokens: why, never the tokens.
public struct TokenStorageError: Error, Hashable, CustomStringConvertible, LocalizedError {
  /// What went wrong.
  public var reason: String

  /// The error.
  /// - Parameter reason: What went wrong.
  public init(reason: String) {
    self.reason = reason
  }

  /// `Token storage: /path/tokens.json does not hold tokens`.
  public var description: String { "Token storage: \(reason)" }
  /// The same as ``description``.
  public var errorDescription: String? { description }
}
