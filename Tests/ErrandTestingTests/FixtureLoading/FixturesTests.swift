import ErrandTesting
import Foundation
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(3))) struct FixturesTests {
  struct Dog: Decodable, Equatable {
    var id: Int
    var name: String
  }

  @Test func findsTheTopLevelFixturesFolder() throws {
    let fixtures = try Fixtures.nearest()
    #expect(fixtures.directory.lastPathComponent == "Fixtures")
    // Tests/ErrandTestingTests/FixtureLoading/FixturesTests.swift, four levels below the root.
    let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    #expect(
      fixtures.directory.standardizedFileURL.path
        == packageRoot.appendingPathComponent("Fixtures").standardizedFileURL.path)
  }

  @Test(arguments: [("dogs.json", 3), ("dog-envelope.json", 1)])
  func readsFixtureBytes(name: String, minimumLines: Int) throws {
    let data = try Fixtures.nearest().data(name)
    let text = try #require(String(data: data, encoding: .utf8))
    #expect(text.split(separator: "\n").count >= minimumLines)
    #expect(text.contains("\"Rex\""))
  }

  @Test func decodesAFixture() throws {
    let dogs = try Fixtures.nearest().decode([Dog].self, from: "dogs.json")
    #expect(dogs == [Dog(id: 1, name: "Rex"), Dog(id: 2, name: "Bella"), Dog(id: 3, name: "Kuma")])
  }

  @Test func namesThePathOfAMissingFixture() throws {
    let fixtures = try Fixtures.nearest()
    let error = try #require(throws: FixtureError.self) { try fixtures.data("cats.json") }
    let path = fixtures.directory.appendingPathComponent("cats.json").path
    #expect(error == .fileNotFound("cats.json", path: path))
    #expect(error.description == "Fixture \"cats.json\" not found at \(path).")
  }

  @Test func namesTheFileThatDoesNotDecode() throws {
    let fixtures = try Fixtures.nearest()
    let error = try #require(throws: FixtureError.self) {
      try fixtures.decode([Int].self, from: "dogs.json")
    }
    guard case .undecodable(let name, let path, let reason) = error else {
      Issue.record("expected undecodable, got \(error)")
      return
    }
    #expect(name == "dogs.json")
    #expect(path == fixtures.url("dogs.json").path)
    #expect(!reason.isEmpty)
  }

  @Test func reportsAMissingFolder() throws {
    let error = try #require(throws: FixtureError.self) {
      try Fixtures.nearest("NoSuchFolder-7f3a", to: "/tmp/errand/test.swift")
    }
    #expect(error == .folderNotFound("NoSuchFolder-7f3a", from: "/tmp/errand/test.swift"))
    #expect(
      error.description
        == "No folder named \"NoSuchFolder-7f3a\" in any directory above /tmp/errand/test.swift.")
  }

  @Test(arguments: [
    ("/a/./b/../c/Test.swift", ["/a/c", "/a", "/"]),
    ("/Test.swift", ["/"]),
    ("/", ["/"]),
    ("/../../../Test.swift", ["/"]),
    ("/a/b/../../../../Test.swift", ["/"]),
    ("//a//b/Test.swift", ["/a/b", "/a", "/"]),
  ])
  func theWalkUpEndsAtTheRoot(filePath: String, expected: [String]) {
    #expect(Fixtures.directories(above: filePath).map(\.path) == expected)
  }

  @Test(arguments: ["/", "/Test.swift", "/../../Test.swift", "relative/Test.swift", ""])
  func aFolderFoundNowhereIsAnErrorNotAHang(filePath: String) throws {
    let error = try #require(throws: FixtureError.self) {
      try Fixtures.nearest("NoSuchFolder-7f3a", to: filePath)
    }
    #expect(error == .folderNotFound("NoSuchFolder-7f3a", from: filePath))
  }
}
