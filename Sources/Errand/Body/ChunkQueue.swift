import Foundation

/// The unread chunks of a body, in arrival order: in memory up to ``HTTPBody/memoryBudget``
/// bytes, then in an unlinked temporary file. Not thread-safe: ``BodyBuffer`` holds it under its
/// lock.
struct ChunkQueue {
  private enum Segment {
    case memory(Data)
    case file(Int)
  }

  private var segments: [Segment] = []
  private var memoryBytes = 0
  private var spill: SpillFile?
  /// Bytes queued and not yet taken, in memory or in the file.
  private(set) var unread = 0

  /// The largest chunk handed to a reader that is behind, merged from queued chunks.
  static let largestMergedChunk = 256 * 1024

  var isEmpty: Bool { segments.isEmpty }

  /// Queue a chunk: in memory while the memory budget allows, else in the file.
  /// - Throws: What writing the file throws (no room on disk, say).
  mutating func append(_ chunk: Data) throws {
    if memoryBytes + chunk.count <= HTTPBody.memoryBudget {
      segments.append(.memory(chunk))
      memoryBytes += chunk.count
      unread += chunk.count
      return
    }
    let file = try spill ?? SpillFile()
    spill = file
    try file.append(chunk)
    unread += chunk.count
    if case .file(let count) = segments.last {
      segments[segments.count - 1] = .file(count + chunk.count)
    } else {
      segments.append(.file(chunk.count))
    }
  }

  /// The first queued chunk, or `nil` when none is queued. A reader `mergeAbove` bytes behind or
  /// more gets queued chunks merged (up to ``largestMergedChunk``), rather than paying its
  /// per-chunk cost for every piece the transport wrote.
  /// - Throws: What reading the file throws.
  mutating func takeFirst(mergeAbove: Int) throws -> Data? {
    guard let first = segments.first else { return nil }
    switch first {
    case .memory(let chunk):
      segments.removeFirst()
      var taken = chunk
      if unread >= mergeAbove {
        while case .memory(let next) = segments.first,
          taken.count + next.count <= Self.largestMergedChunk
        {
          segments.removeFirst()
          taken.append(next)
        }
      }
      memoryBytes -= taken.count
      unread -= taken.count
      return taken
    case .file(let count):
      guard let spill else { return nil }
      let chunk = try spill.read(upTo: min(count, Self.largestMergedChunk))
      unread -= chunk.count
      if chunk.count < count {
        segments[0] = .file(count - chunk.count)
      } else {
        segments.removeFirst()
        if !segments.contains(where: { if case .file = $0 { true } else { false } }) {
          try spill.reset()
        }
      }
      return chunk
    }
  }

  /// Everything queued, as one buffer; the queue is empty afterwards.
  /// - Throws: What reading the file throws.
  mutating func takeAll() throws -> Data {
    var all = Data()
    all.reserveCapacity(unread)
    while let chunk = try takeFirst(mergeAbove: .max) {
      all.append(chunk)
    }
    return all
  }

  /// Drop everything queued.
  mutating func removeAll() {
    segments = []
    memoryBytes = 0
    unread = 0
    spill = nil
  }
}
