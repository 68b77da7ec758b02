import Foundation

/// A folder of fixture files (JSON bodies, recorded exchanges) that tests read by name.
///
/// ```swift
/// let fixtures = try Fixtures.nearest()          // the Fixtures/ folder above this test file
/// let body = try fixtures.data("dogs.json")
/// let dogs = try fixtures.decode([Dog].self, from: "dogs.json")
/// ```
///
/// Every failure is a thrown ``FixtureError`` that names the path tried, so tests load fixtures
/// with `try`, never a forced `try`.
public struct Fixtures: Sendable, Hashable {
  /// The folder that holds the fixtures.
  public var directory: URL

  /// Use a folder of fixtures.
  /// - Parameter directory: The folder that holds the fixtures.
  public init(directory: URL) {
    self.directory = directory
  }

  /// The nearest folder named `folderName` in the directories above a source file, so a test
  /// finds the package's top-level `Fixtures/` wherever it sits.
  /// - Parameters:
  ///   - folderName: The folder's name.
  ///   - filePath: The file to start from; the caller's file by default.
  /// - Returns: The fixtures in that folder.
  /// - Throws: ``FixtureError/folderNotFound(_:from:)`` when no directory above has the folder.
  public static func nearest(_ folderName: String = "Fixtures", to filePath: String = #filePath)
    throws -> Fixtures
  {
    for directory in directories(above: filePath) {
      let candidate = directory.appendingPathComponent(folderName, isDirectory: true)
      var isDirectory: ObjCBool = false
      if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDirectory),
        isDirectory.boolValue
      {
        return Fixtures(directory: candidate)
      }
    }
    throw FixtureError.folderNotFound(folderName, from: filePath)
  }

  /// The directories that contain `filePath`, nearest first and the root last.
  ///
  /// Computed from the standardized path's components rather than by removing the last component
  /// until nothing changes, which never ends on systems where the root's parent is `/..`: the
  /// walk is at most as long as the path.
  package static func directories(above filePath: String) -> [URL] {
    let components = URL(fileURLWithPath: filePath).standardizedFileURL.pathComponents
      .dropFirst()  // the root, "/"
      .filter { $0 != "." && $0 != ".." }  // a standardized path keeps ".." only above the root
    return (0..<max(components.count, 1)).reversed().map { depth in
      URL(fileURLWithPath: "/" + components.prefix(depth).joined(separator: "/"), isDirectory: true)
    }
  }

  /// The URL of a fixture file.
  /// - Parameter name: The file name, relative to the folder, such as `dogs.json`.
  /// - Returns: The file's URL, whether or not it exists.
  public func url(_ name: String) -> URL {
    directory.appendingPathComponent(name, isDirectory: false)
  }

  /// The bytes of a fixture file.
  /// - Parameter name: The file name, relative to the folder.
  /// - Returns: The bytes.
  /// - Throws: ``FixtureError/fileNotFound(_:path:)`` or ``FixtureError/unreadable(_:path:reason:)``.
  public func data(_ name: String) throws -> Data {
    let file = url(name)
    guard FileManager.default.fileExists(atPath: file.path) else {
      throw FixtureError.fileNotFound(name, path: file.path)
    }
    do {
      return try Data(contentsOf: file)
    } catch {
      throw FixtureError.unreadable(name, path: file.path, reason: error.localizedDescription)
    }
  }

  /// Decode a JSON fixture file.
  /// - Parameters:
  ///   - type: The type to decode.
  ///   - name: The file name, relative to the folder.
  ///   - decoder: The decoder to use.
  /// - Returns: The decoded value.
  /// - Throws: A ``FixtureError`` when the file is missing, unreadable or does not decode.
  public func decode<Value: Decodable>(
    _ type: Value.Type, from name: String, decoder: JSONDecoder = JSONDecoder()
  ) throws -> Value {
    let bytes = try data(name)
    do {
      return try decoder.decode(type, from: bytes)
    } catch {
      throw FixtureError.undecodable(name, path: url(name).path, reason: String(describing: error))
    }
  }
}

/// Why a fixture could not be loaded; the description names the path tried.
public enum FixtureError: Error, Equatable, CustomStringConvertible {
  /// No directory above the starting file has a folder with that name.
  case folderNotFound(_ folderName: String, from: String)
  /// The fixture file does not exist.
  case fileNotFound(_ name: String, path: String)
  /// The fixture file exists but could not be read.
  case unreadable(_ name: String, path: String, reason: String)
  /// The fixture file is not valid for the type asked for.
  case undecodable(_ name: String, path: String, reason: String)

  /// What went wrong, with the path tried.
  public var description: String {
    switch self {
    case .folderNotFound(let folderName, let start):
      return "No folder named \"\(folderName)\" in any directory above \(start)."
    case .fileNotFound(let name, let path):
      return "Fixture \"\(name)\" not found at \(path)."
    case .unreadable(let name, let path, let reason):
      return "Fixture \"\(name)\" at \(path) could not be read: \(reason)"
    case .undecodable(let name, let path, let reason):
      return "Fixture \"\(name)\" at \(path) could not be decoded: \(reason)"
    }
  }
}
