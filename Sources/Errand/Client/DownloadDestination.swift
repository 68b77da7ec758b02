import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Where ``APIClient/download(_:to:progress:)`` may write, checked before the request is sent and
/// again just before the downloaded file is moved into place.
///
/// Only a regular file (or nothing) is ever replaced, and only by an atomic `rename(2)` of a file
/// written next to it: a directory, a device, a FIFO, a socket, or a symbolic link to anything but
/// a file is refused and left untouched. A symbolic link to a file is replaced by the downloaded
/// file; the file it pointed at is untouched. A destination whose last component is `.` or `..`, or
/// that ends in `/`, names a folder and is refused too.
struct DownloadDestination: Sendable {
  let url: URL
  let folder: URL

  /// Checks `url` and its folder, and throws ``APIError/invalidRequest(_:)`` saying what is wrong.
  init(_ url: URL) throws(APIError) {
    guard url.isFileURL else {
      throw Self.refused(url.absoluteString, "is not a file URL")
    }
    let path = url.path
    let last = (path as NSString).lastPathComponent
    guard !path.isEmpty, last != ".", last != ".." else {
      throw Self.refused(path, "names a folder, not a file")
    }
    self.url = url
    self.folder = url.deletingLastPathComponent()
    try checkReplaceable()
    guard !path.hasSuffix("/"), !url.hasDirectoryPath else {
      throw Self.refused(path, "names a folder, not a file")
    }
    guard FileKind(atPath: folder.path, following: true) == .directory else {
      throw Self.refused(path, "is in a folder that does not exist")
    }
  }

  /// Throws unless the destination is missing, a regular file, or a symbolic link that is not to
  /// a folder or a special file.
  func checkReplaceable() throws(APIError) {
    let path = url.path
    switch FileKind(atPath: path, following: false) {
    case .missing, .regular: return
    case .symbolicLink:
      switch FileKind(atPath: path, following: true) {
      case .missing, .regular: return
      case let target: throw Self.refused(path, "is a symbolic link to \(target.description)")
      }
    case let other: throw Self.refused(path, "is \(other.description)")
    }
  }

  /// A name in the destination's folder for the file being written, unique to this download:
  /// the destination's name cut to 100 bytes (file names are limited in bytes, 255 on most file
  /// systems, not in characters), a UUID and `.partial`.
  func partialFile() -> URL {
    var name = Substring(url.lastPathComponent)
    while name.utf8.count > 100 {
      name = name.dropLast()
    }
    return folder.appendingPathComponent(".\(name).\(UUID().uuidString).partial")
  }

  /// Creates `partial`, empty, as a new file (never through a link or over a file already there),
  /// no more readable than the file it will replace: a download over a `0600` file is `0600`
  /// from its first byte, not only once it is in place.
  func createPartial(_ partial: URL) throws {
    var replaced = stat()
    let mode = stat(url.path, &replaced) == 0 ? mode_t(replaced.st_mode & 0o777) : 0o666
    let descriptor = open(partial.path, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, mode)
    guard descriptor >= 0 else {
      let code = POSIXErrorCode(rawValue: errno) ?? .EIO
      throw CocoaError(
        .fileWriteNoPermission,
        userInfo: [NSFilePathErrorKey: partial.path, NSUnderlyingErrorKey: POSIXError(code)])
    }
    close(descriptor)
  }

  /// Moves `partial` over the destination in one step, after checking the destination again. A
  /// file it replaces keeps its permissions: a `0600` file stays `0600`.
  func replace(with partial: URL) throws {
    try checkReplaceable()
    var replaced = stat()
    if stat(url.path, &replaced) == 0 {
      _ = chmod(partial.path, replaced.st_mode & 0o777)
    }
    guard rename(partial.path, url.path) == 0 else {
      let code = POSIXErrorCode(rawValue: errno) ?? .EIO
      throw CocoaError(
        .fileWriteUnknown,
        userInfo: [NSFilePathErrorKey: url.path, NSUnderlyingErrorKey: POSIXError(code)])
    }
  }

  private static func refused(_ path: String, _ problem: String) -> APIError {
    .invalidRequest(
      "the download destination \(path) \(problem); Errand only writes a new file or replaces a "
        + "regular file, and touched nothing.")
  }
}
