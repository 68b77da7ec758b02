import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `download(_:to:)` writes a new file or replaces a regular one, atomically, and refuses anything
/// else before the request is sent. Every test works inside its own temporary folder, so even a
/// regression deletes nothing outside it.
@Suite(.timeLimit(.minutes(3))) struct DownloadDestinationTests {
  /// Destinations that must be refused, each set up inside a fresh folder.
  enum Refused: String, CaseIterable, CustomTestStringConvertible {
    case folderWithFiles = "a folder with files in it"
    case linkToFolder = "a symbolic link to a folder"
    case namedPipe = "a named pipe"
    case linkToDevice = "a symbolic link to a device"
    case endingInDotDot = "a path ending in .."
    case endingInDot = "a path ending in ."
    case endingInSlash = "a path ending in /"
    case missingFolder = "a file in a folder that does not exist"
    case notAFile = "an https URL"

    var testDescription: String { rawValue }

    /// Creates what the destination names, and returns the destination and the reason expected.
    func setUp(in folder: TemporaryFolder) throws -> (URL, String) {
      let files = FileManager.default
      let keep = folder.appending("sub/keep.txt")
      try files.createDirectory(at: folder.appending("sub"), withIntermediateDirectories: true)
      try Data("keep me".utf8).write(to: keep)
      try Data("keep me too".utf8).write(to: folder.appending("sibling.txt"))
      let path = folder.url.path
      switch self {
      case .folderWithFiles:
        return (folder.appending("sub"), "is a folder")
      case .linkToFolder:
        try files.createSymbolicLink(atPath: "\(path)/link", withDestinationPath: "\(path)/sub")
        return (folder.appending("link"), "is a symbolic link to a folder")
      case .namedPipe:
        try #require(mkfifo("\(path)/pipe", 0o600) == 0)
        return (folder.appending("pipe"), "is a named pipe (FIFO)")
      case .linkToDevice:
        try files.createSymbolicLink(atPath: "\(path)/null", withDestinationPath: "/dev/null")
        return (folder.appending("null"), "is a symbolic link to a device")
      case .endingInDotDot:
        return (URL(fileURLWithPath: "\(path)/sub/.."), "names a folder")
      case .endingInDot:
        return (URL(fileURLWithPath: "\(path)/sub/."), "names a folder")
      case .endingInSlash:
        return (URL(fileURLWithPath: "\(path)/new/", isDirectory: true), "names a folder")
      case .missingFolder:
        return (folder.appending("missing/file.bin"), "is in a folder that does not exist")
      case .notAFile:
        return (URL(string: "https://example.com/file.bin")!, "is not a file URL")
      }
    }
  }

  /// Every path under `folder` with its contents (or what it is), to compare before and after.
  func snapshot(_ folder: TemporaryFolder) -> [String: String] {
    var entries: [String: String] = [:]
    let files = FileManager.default
    for name in (try? files.subpathsOfDirectory(atPath: folder.url.path)) ?? [] {
      let path = folder.appending(name).path
      if let link = try? files.destinationOfSymbolicLink(atPath: path) {
        entries[name] = "link to \(link)"
      } else {
        var isFolder: ObjCBool = false
        _ = files.fileExists(atPath: path, isDirectory: &isFolder)
        entries[name] =
          isFolder.boolValue
          ? "folder"
          : (files.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) }
            ?? "special")
      }
    }
    return entries
  }

  @Test(arguments: Refused.allCases)
  func aDestinationThatIsNotAFileIsRefusedAndNothingIsTouched(_ setup: Refused) async throws {
    let folder = try TemporaryFolder()
    let (destination, reason) = try setup.setUp(in: folder)
    let before = snapshot(folder)
    let stub = StubTransport()
    await stub.on(.get, "/v1/video", .status(200, body: Data("new bytes".utf8)))
    let error = await #expect(throws: APIError.self) {
      _ = try await client(stub).download(
        Endpoint<Data>(path: "video", decoding: .data), to: destination)
    }
    #expect(error?.kind == .invalidRequest)
    let message = error?.invalidRequestReason ?? ""
    #expect(message.contains("the download destination"), "\(message)")
    #expect(message.contains(reason), "\(message)")
    #expect(message.contains("touched nothing"), "\(message)")
    #expect(snapshot(folder) == before)
    #expect(before["sub/keep.txt"] == "keep me" && before["sibling.txt"] == "keep me too")
    #expect(await stub.requests(matching: .any).isEmpty, "the request is never sent")
  }

  @Test func aRegularFileIsReplacedByRenameNotRewrittenInPlace() async throws {
    let folder = try TemporaryFolder()
    let destination = folder.appending("video.bin")
    try Data("old bytes".utf8).write(to: destination)
    // A hard link shares the old file's inode: a rename leaves it holding the old bytes, while
    // writing into the destination in place would change it too.
    try FileManager.default.linkItem(at: destination, to: folder.appending("hard-link"))
    let stub = StubTransport()
    await stub.on(.get, "/v1/video", .status(200, body: Data("new bytes".utf8)))
    let saved = try await client(stub).download(
      Endpoint<Data>(path: "video", decoding: .data), to: destination)
    #expect(saved.value == destination)
    #expect(try Data(contentsOf: destination) == Data("new bytes".utf8))
    #expect(try Data(contentsOf: folder.appending("hard-link")) == Data("old bytes".utf8))
    #expect(folder.names == ["hard-link", "video.bin"])
  }

  @Test func aSymbolicLinkToAFileIsReplacedAndItsTargetIsUntouched() async throws {
    let folder = try TemporaryFolder()
    let target = folder.appending("target.bin")
    try Data("target bytes".utf8).write(to: target)
    let destination = folder.appending("link.bin")
    try FileManager.default.createSymbolicLink(at: destination, withDestinationURL: target)
    let stub = StubTransport()
    await stub.on(.get, "/v1/video", .status(200, body: Data("new bytes".utf8)))
    _ = try await client(stub).download(
      Endpoint<Data>(path: "video", decoding: .data), to: destination)
    #expect(try Data(contentsOf: target) == Data("target bytes".utf8))
    #expect(try Data(contentsOf: destination) == Data("new bytes".utf8))
    #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: destination.path)) == nil)
  }

  @Test func aDestinationThatBecomesAFolderMidDownloadIsNotReplaced() async throws {
    let clock = TestClock()
    let folder = try TemporaryFolder()
    let destination = folder.appending("video.bin")
    let stub = StubTransport(clock: clock)
    await stub.on(
      .get, "/v1/video", .chunks([Data("ab".utf8), Data("cd".utf8)], interval: .seconds(1)))
    let download = Task {
      try await client(stub).download(
        Endpoint<Data>(path: "video", decoding: .data), to: destination)
    }
    try #require(await clock.waitForSleepers(1))
    try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: false)
    try Data("inside".utf8).write(to: destination.appendingPathComponent("inside.txt"))
    await clock.advance(by: .seconds(1))
    let error = await #expect(throws: APIError.self) { _ = try await download.cancellableValue }
    #expect(error?.invalidRequestReason?.contains("is a folder") == true)
    #expect(folder.names == ["video.bin"], "the partial file is removed")
    let inside = destination.appendingPathComponent("inside.txt")
    #expect(try Data(contentsOf: inside) == Data("inside".utf8))
  }

  /// A replaced file keeps its permissions: a private file does not become readable by others.
  @Test(arguments: [0o600, 0o640, 0o755] as [mode_t])
  func aReplacedFileKeepsItsMode(mode: mode_t) async throws {
    let folder = try TemporaryFolder()
    let destination = folder.appending("secret.json")
    try Data("old".utf8).write(to: destination)
    try #require(chmod(destination.path, mode) == 0)
    let stub = StubTransport()
    await stub.on(.get, "/v1/video", .status(200, body: Data("new bytes".utf8)))
    _ = try await client(stub).download(
      Endpoint<Data>(path: "video", decoding: .data), to: destination)
    var info = stat()
    try #require(stat(destination.path, &info) == 0)
    #expect(info.st_mode & 0o777 == mode)
    #expect(try Data(contentsOf: destination) == Data("new bytes".utf8))
  }

  /// A name as long as the file system allows, in bytes: 252 bytes of three-byte characters (84
  /// characters) or 255 of ASCII. The partial file's name is cut by bytes, not characters.
  @Test(arguments: [String(repeating: "文", count: 84), String(repeating: "a", count: 255)])
  func aNameAsLongAsTheFileSystemAllowsIsWritten(name: String) async throws {
    let folder = try TemporaryFolder()
    let destination = folder.appending(name)
    let stub = StubTransport()
    await stub.on(.get, "/v1/video", .status(200, body: Data("new bytes".utf8)))
    _ = try await client(stub).download(
      Endpoint<Data>(path: "video", decoding: .data), to: destination)
    #expect(try Data(contentsOf: destination) == Data("new bytes".utf8))
    #expect(folder.names == [name])
  }
}
