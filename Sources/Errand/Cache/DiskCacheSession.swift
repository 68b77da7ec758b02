import Foundation

/// One operation of the disk store on its folder, `LOCK` held: the open folder and the bytes the
/// entry files take, kept up to date as files are written and removed.
struct DiskCacheSession {
  /// One entry file, as listed.
  struct EntryFile {
    var folder: String
    var name: String
    var size: Int
    var modified: Double
  }

  let root: DirectoryHandle
  let budget: Int
  /// The bytes the entry files take, as far as ``isCounted`` says.
  private(set) var bytes: Int
  /// Whether ``bytes`` is known: read from `LOCK`, or counted from the files in this session.
  private(set) var isCounted: Bool
  /// How many times this session listed every entry file (``entryFiles()``).
  private(set) var listings = 0

  /// A session on `root`, with the byte count `LOCK` holds, or `nil` when it holds none.
  init(root: DirectoryHandle, budget: Int, bytes: Int?) {
    self.root = root
    self.budget = budget
    self.bytes = bytes ?? 0
    isCounted = bytes != nil
  }

  /// Every entry file, the byte count set from them. What does not belong is removed on the way:
  /// a link or a file where a URL's folder belongs, anything in a URL's folder but a regular
  /// `.entry` file within the budget (a link, a pipe, a folder, a temporary file a crash left,
  /// a file too large to be one the store wrote), and a URL's folder left empty.
  mutating func entryFiles() -> [EntryFile] {
    listings += 1
    var found: [EntryFile] = []
    for name in root.names() {
      if name.hasPrefix(DirectoryHandle.temporaryPrefix) {
        root.remove(name)
        continue
      }
      guard DiskCacheStore.isFolderName(name) else { continue }
      guard let folder = root.folder(name, creating: false) else {
        if root.kind(name) != .directory {
          root.remove(name)
        }
        continue
      }
      var kept = 0
      for file in folder.names() {
        if file.hasSuffix(".entry"), let info = folder.status(file), info.kind == .regular,
          info.size <= budget
        {
          found.append(
            EntryFile(folder: name, name: file, size: info.size, modified: info.modified))
          kept += 1
        } else {
          folder.remove(file)
        }
      }
      if kept == 0 {
        root.removeIfEmpty(name)
      }
    }
    bytes = found.reduce(0) { $0 + $1.size }
    isCounted = true
    return found
  }

  /// Make room for a file of `size` bytes: when it does not fit the budget, remove the least
  /// recently used entry files until it fits nine tenths of it, so that the files are listed once
  /// for every tenth of the budget written, not for every write. Without a count, the files are
  /// counted first.
  mutating func makeRoom(for size: Int) {
    let listed = isCounted ? nil : entryFiles()
    guard bytes + size > budget else { return }
    let target = budget - budget / 10
    let files = (listed ?? entryFiles()).sorted { $0.modified < $1.modified }
    var index = 0
    while bytes + size > target, index < files.count {
      let file = files[index]
      index += 1
      guard let folder = root.folder(file.folder, creating: false) else { continue }
      removeFile(file.name, in: folder)
      root.removeIfEmpty(file.folder)
    }
  }

  /// Remove the least recently used `.entry` files of one URL's `folder` but `name` until fewer
  /// than `most` are left, so that a lookup, which may read each of them, reads a bounded number.
  mutating func keepVariants(in folder: DirectoryHandle, fewerThan most: Int, besides name: String)
  {
    let others = folder.names().filter { $0.hasSuffix(".entry") && $0 != name }
    guard others.count >= most else { return }
    let oldestFirst = others.map { ($0, folder.status($0)?.modified ?? 0) }.sorted { $0.1 < $1.1 }
    for (other, _) in oldestFirst.prefix(others.count - most + 1) {
      removeFile(other, in: folder)
    }
  }

  /// Count `size` more bytes written, and `replaced` fewer.
  mutating func wrote(_ size: Int, replacing replaced: Int) {
    bytes = max(0, bytes - replaced) + size
  }

  /// Start afresh: no entry file left.
  mutating func emptied() {
    bytes = 0
    isCounted = true
  }

  /// The bytes the count holds for `name` in `folder`: its size if it is a regular `.entry` file
  /// within the budget, else 0.
  func countedSize(of name: String, in folder: DirectoryHandle) -> Int {
    guard name.hasSuffix(".entry"), let info = folder.status(name), info.kind == .regular,
      info.size <= budget
    else { return 0 }
    return info.size
  }

  /// Remove `name` from `folder` (a link as a link), keeping the count.
  mutating func removeFile(_ name: String, in folder: DirectoryHandle) {
    let size = countedSize(of: name, in: folder)
    if folder.remove(name) {
      bytes = max(0, bytes - size)
    }
  }

  /// Remove the URL's folder `name` and what it holds, keeping the count; a link or a file of
  /// that name is removed itself.
  mutating func removeFolder(_ name: String) {
    if let folder = root.folder(name, creating: false) {
      for file in folder.names() {
        removeFile(file, in: folder)
      }
    }
    root.remove(name)
  }
}
