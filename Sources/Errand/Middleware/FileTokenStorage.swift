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

  /// The tokens in the file, or `nil` when there is no file.
  /// - Throws: ``TokenStorageError`` when the file is not a regular file, too large or does not
  ///   hold tokens (never quoting it).
  public func load() async throws -> StoredTokens? {
    switch FileKind(atPath: url.path, following: false) {
    case .missing: return nil
    case .regular: break
    case let kind:
      throw TokenStorageError(reason: "\(url.path) is \(kind.description), not a file of tokens")
    }
    let data: Data
    do {
      let handle = try FileHandle(forReadingFrom: url)
      defer { try? handle.close() }
      data = try handle.read(upToCount: Self.maximumSize + 1) ?? Data()
    } catch {
      throw TokenStorageError(reason: "\(url.path) could not be read")
    }
    guard data.count <= Self.maximumSize else {
      throw TokenStorageError(reason: "\(url.path) is larger than \(Self.maximumSize) bytes")
    }
    do {
      return try JSONDecoder().decode(StoredTokens.self, from: data)
    } catch {
      throw TokenStorageError(reason: "\(url.path) does not hold tokens")
    }
  }

  /// Write `tokens` to the file atomically, with permissions `0600`.
  /// - Parameter tokens: The tokens to keep.
  /// - Throws: ``TokenStorageError`` when the file cannot be written.
  public func save(_ tokens: StoredTokens) async throws {
    let data = try JSONEncoder().encode(tokens)
    let folder = url.deletingLastPathComponent().path
    let temporary = "\(folder)/.\(url.lastPathComponent).\(UUID().uuidString).tmp"
    let file = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
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
    guard written, synced, rename(temporary, url.path) == 0 else {
      let code = errno
      unlink(temporary)
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
