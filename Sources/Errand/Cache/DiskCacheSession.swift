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
  /// The bytes the entry files take.
  var bytes: Int
  /// Whether ``bytes`` was counted from the files in this session.
  private(set) var counted = false

  init(root: DirectoryHandle, budget: Int, bytes: Int) {
    self.root = root
    self.budget = budget
    self.bytes = bytes
  }

  /// Every entry file, the byte count set from them. What does not belong is removed on the way:
  /// a link or a file where a URL's folder belongs, anything in a URL's folder but a regular
  /// `.entry` file within the budget (a link, a pipe, a folder, a temporary file a crash left,
  /// a file too large to be one the store wrote), and a URL's folder left empty.
  mutating func entryFiles() -> [EntryFile] {
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
    counted = true
    return found
  }

  /// Remove the least recently used entry files until `size` more bytes fit the budget.
  mutating func makeRoom(for size: Int) {
    guard bytes + size > budget else { return }
    var index = 0
    let files = entryFiles().sorted { $0.modified < $1.modified }
    while bytes + size > budget, index < files.count {
      let file = files[index]
      index += 1
      guard let folder = root.folder(file.folder, creating: false) else { continue }
      removeFile(file.name, in: folder)
      root.removeIfEmpty(file.folder)
    }
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
