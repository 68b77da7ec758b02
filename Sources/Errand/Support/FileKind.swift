import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// What is at a path, as `stat(2)` or `lstat(2)` tell, without opening it: opening a named pipe
/// blocks until a writer comes, and reading a device may never end.
package enum FileKind: Equatable, Sendable {
  case missing, regular, directory, symbolicLink, characterDevice, blockDevice, fifo, socket
  /// Something else, or a path that cannot be inspected.
  case other

  /// Inspect `path`.
  /// - Parameters:
  ///   - path: The path.
  ///   - following: Whether a symbolic link is followed (`stat`) or reported (`lstat`).
  package init(atPath path: String, following: Bool) {
    var info = stat()
    let result = following ? stat(path, &info) : lstat(path, &info)
    guard result == 0 else {
      self = errno == ENOENT || errno == ENOTDIR ? .missing : .other
      return
    }
    self = Self(mode: info.st_mode)
  }

  /// The kind a `stat` mode names.
  package init(mode: mode_t) {
    switch mode & S_IFMT {
    case S_IFREG: self = .regular
    case S_IFDIR: self = .directory
    case S_IFLNK: self = .symbolicLink
    case S_IFCHR: self = .characterDevice
    case S_IFBLK: self = .blockDevice
    case S_IFIFO: self = .fifo
    case S_IFSOCK: self = .socket
    default: self = .other
    }
  }

  /// The kind in words, for error messages: "a folder", "a named pipe (FIFO)"...
  package var description: String {
    switch self {
    case .missing: "nothing"
    case .regular: "a file"
    case .directory: "a folder"
    case .symbolicLink: "a symbolic link"
    case .characterDevice, .blockDevice: "a device"
    case .fifo: "a named pipe (FIFO)"
    case .socket: "a socket"
    case .other: "not a regular file"
    }
  }
}
