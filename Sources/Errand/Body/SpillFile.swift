import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A temporary file that holds the unread part of a body: removed from the directory as soon as
/// it is open, so nothing is left behind, and emptied whenever the reader catches up.
///
/// Writes are gathered into runs of up to ``runLength`` bytes (held in memory beside the body's
/// ``HTTPBody/memoryBudget``) and each run is written with one call, and the file has separate
/// handles for writing and reading, so neither ever seeks: on Linux, URLSession's transfer goes
/// at the pace of the callbacks that write here (``DelegateQueue``), so the cheaper each write,
/// the sooner a stalled reader's body is all on disk.
final class SpillFile {
  static let runLength = 1024 * 1024
  private let writer: FileHandle
  private let reader: FileHandle
  private var run = Data()
  private var written: UInt64 = 0
  private var read: UInt64 = 0

  init() throws {
    let url = FileManager.default.temporaryDirectory
      .appendingPathComponent("errand-body-\(UUID().uuidString)")
    // Created new, never through a link, and readable by its owner only from the start: the
    // temporary folder is shared, and a file another user can open before it is unlinked is one
    // they can read the rest of the body from.
    let descriptor = open(url.path, O_CREAT | O_EXCL | O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else {
      throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
    }
    defer { try? FileManager.default.removeItem(at: url) }
    writer = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    do {
      reader = try FileHandle(forReadingFrom: url)
    } catch {
      try? writer.close()
      throw error
    }
    run.reserveCapacity(Self.runLength)
  }

  deinit {
    try? writer.close()
    try? reader.close()
  }

  func append(_ chunk: Data) throws {
    run.append(chunk)
    if run.count >= Self.runLength {
      try flush()
    }
  }

  private func flush() throws {
    guard !run.isEmpty else { return }
    try writer.write(contentsOf: run)
    written += UInt64(run.count)
    run.removeAll(keepingCapacity: true)
  }

  func read(upTo count: Int) throws -> Data {
    if read == written {
      try flush()
    }
    let chunk = try reader.read(upToCount: min(count, Int(written - read))) ?? Data()
    guard !chunk.isEmpty else { throw CocoaError(.fileReadCorruptFile) }
    read += UInt64(chunk.count)
    return chunk
  }

  func reset() throws {
    try writer.truncate(atOffset: 0)
    try reader.seek(toOffset: 0)
    written = 0
    read = 0
  }
}
