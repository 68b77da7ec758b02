import Errand
import ErrandTesting
import Foundation
import Testing

@testable import DogPatch

@Suite(.timeLimit(.minutes(3))) struct DogPatchCommandTests {
  @Test(arguments: [
    ([], DogPatchCommand(source: .cassette)),
    (
      ["--server", "http://127.0.0.1:8080/v1"],
      DogPatchCommand(source: .server(URL(string: "http://127.0.0.1:8080/v1")!))
    ),
    (
      ["--server", "https://api.dogpatch.example/v1", "--record"],
      DogPatchCommand(source: .record(URL(string: "https://api.dogpatch.example/v1")!))
    ),
    (["--watch"], DogPatchCommand(source: .cassette, watch: true)),
    (
      ["--watch", "--server", "http://127.0.0.1:8080/v1"],
      DogPatchCommand(source: .server(URL(string: "http://127.0.0.1:8080/v1")!), watch: true)
    ),
  ])
  func parsesTheCommandLine(arguments: [String], expected: DogPatchCommand) throws {
    #expect(try DogPatchCommand.parse(arguments) == expected)
  }

  @Test(arguments: [
    (["--server"], "--server needs a URL, such as http://127.0.0.1:8080/v1"),
    (["--server", "nope"], "'nope' is not a server URL; try http://127.0.0.1:8080/v1"),
    (
      ["--server", "ftp://files.example"],
      "'ftp://files.example' is not a server URL; try http://127.0.0.1:8080/v1"
    ),
    (["--record"], "--record needs --server to record from"),
    (["--verbose"], "unknown option '--verbose'"),
  ])
  func rejectsBadCommandLinesInOneLine(arguments: [String], message: String) {
    #expect(throws: DogPatchCommandError.message(message)) { try DogPatchCommand.parse(arguments) }
  }

  @Test func watchesTheFeedFromTheCommittedCassette() async throws {
    let cassette = try Fixtures.nearest().url("cassettes/dogpatch.json")
    let lines = Locked<[String]>([])
    let succeeded = await DogPatchCommand(source: .cassette, watch: true).watch(cassette: cassette)
    {
      line in lines.withLock { $0.append(line) }
    }
    #expect(succeeded)
    #expect(
      lines.withLock { $0 } == [
        "watching for new dogs...",
        "new: #4 Milo, Dachshund, 1 year, $700.00",
        "new: #5 Luna, Beagle, 4 years, $950.50",
        "new: #6 Bruno, Boxer, 6 years, $1,100.00",
        "the feed has ended",
      ])
  }

  @Test func listsTheDogsFromTheCommittedCassette() async throws {
    let cassette = try Fixtures.nearest().url("cassettes/dogpatch.json")
    let (output, succeeded) = await DogPatchCommand(source: .cassette).run(cassette: cassette)
    #expect(succeeded)
    #expect(
      output == """
        ID  Name   Breed          Age      Price
        --  -----  -------------  ---  ---------
         1  Rex    Labrador         3    $850.00
         2  Bella  Border Collie    5  $1,200.50
         3  Kuma   Shiba Inu        2  $1,500.00

        """)
  }

  @Test(arguments: [
    (
      APIError.unacceptableStatus(HTTPResponse(status: 503)),
      "the server refused the request with HTTP 503."
    ),
    (
      .decoding(
        DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "x")),
        HTTPResponse(status: 200)), "the server's answer is not a list of dogs."
    ),
    (.transport(URLError(.cannotConnectToHost)), "the server cannot be reached."),
    (.timedOut, "the server cannot be reached."),
  ])
  func explainsEachFailureInOneLine(error: APIError, start: String) {
    let line = DogPatchCommand.explain(error)
    #expect(line.hasPrefix(start))
    #expect(!line.contains("\n"))
  }

  @Test func aMissingCassetteIsNamed() async throws {
    let missing = FileManager.default.temporaryDirectory.appendingPathComponent(
      "no-such-\(UUID()).json")
    let (output, succeeded) = await DogPatchCommand(source: .cassette).run(cassette: missing)
    #expect(!succeeded)
    #expect(
      output
        == "dogpatch: No cassette at \(missing.path). Record one with mode .once or .all and an upstream transport.\n"
    )
  }

  @Test(arguments: [
    (Decimal(850), "$850.00"), (Decimal(string: "1200.5")!, "$1,200.50"),
    (Decimal(1_234_567), "$1,234,567.00"), (Decimal(0), "$0.00"),
  ])
  func formatsPrices(amount: Decimal, text: String) {
    #expect(DogTable.price(amount) == text)
  }
}
