import Errand
import ErrandStubs
import Foundation

/// What `swift run dogpatch` does: list the dogs from a cassette (no network needed), from a live
/// server, or record a new cassette.
public struct DogPatchCommand: Sendable, Equatable {
  /// Where the dogs come from.
  public enum Source: Sendable, Equatable {
    /// Replay the committed cassette, `Fixtures/cassettes/dogpatch.json`.
    case cassette
    /// Ask a live server.
    case server(URL)
    /// Ask a live server and record what it says into the cassette.
    case record(URL)
  }

  /// Where the dogs come from.
  public var source: Source
  /// Follow the feed of new dogs instead of listing the dogs.
  public var watch = false

  /// The base URL the committed cassette was recorded against.
  public static let cassetteBaseURL = URL(string: "https://api.dogpatch.example/v1")!

  /// The usage text.
  public static let usage = """
    usage: dogpatch [--server URL [--record]] [--watch]
      (no options)   list the dogs from Fixtures/cassettes/dogpatch.json, offline
      --server URL   list the dogs from a live DogPatch server
      --record       with --server, record the answers into the cassette
      --watch        follow the live feed of new dogs (Server-Sent Events) instead
    """

  /// Read the command line.
  /// - Parameter arguments: The arguments, without the program name.
  /// - Returns: The command.
  /// - Throws: ``DogPatchCommandError`` with a one-line message.
  public static func parse(_ arguments: [String]) throws(DogPatchCommandError) -> DogPatchCommand {
    var server: URL?
    var record = false
    var watch = false
    var remaining = arguments[...]
    while let argument = remaining.popFirst() {
      switch argument {
      case "--server":
        guard let text = remaining.popFirst() else {
          throw .message("--server needs a URL, such as http://127.0.0.1:8080/v1")
        }
        guard let url = URL(string: text), let scheme = url.scheme,
          ["http", "https"].contains(scheme.lowercased()),
          url.host?.isEmpty == false
        else { throw .message("'\(text)' is not a server URL; try http://127.0.0.1:8080/v1") }
        server = url
      case "--record":
        record = true
      case "--watch":
        watch = true
      case "--help", "-h":
        throw .help
      default:
        throw .message("unknown option '\(argument)'")
      }
    }
    switch (server, record) {
    case (nil, true): throw .message("--record needs --server to record from")
    case (nil, false): return DogPatchCommand(source: .cassette, watch: watch)
    case (let url?, false): return DogPatchCommand(source: .server(url), watch: watch)
    case (let url?, true): return DogPatchCommand(source: .record(url), watch: watch)
    }
  }

  /// The client this command talks through.
  /// - Parameter cassette: The cassette file to replay or record.
  /// - Returns: The client.
  public func client(cassette: URL) -> DogPatchClient {
    switch source {
    case .cassette:
      return DogPatchClient(
        baseURL: Self.cassetteBaseURL,
        transport: CassetteTransport(url: cassette, mode: .none, allowsRepeats: true))
    case .server(let url):
      return DogPatchClient(baseURL: url, transport: URLSessionTransport())
    case .record(let url):
      return DogPatchClient(
        baseURL: url,
        transport: CassetteTransport(url: cassette, mode: .all, upstream: URLSessionTransport()))
    }
  }

  /// Run the command: the table on success, one line on failure.
  /// - Parameter cassette: The cassette file to replay or record.
  /// - Returns: What to print, and whether it succeeded.
  public func run(cassette: URL) async -> (output: String, succeeded: Bool) {
    do {
      let dogs = try await client(cassette: cassette).getDogs()
      return (DogTable.render(dogs), true)
    } catch let error as APIError {
      return ("dogpatch: \(Self.explain(error))\n", false)
    } catch {
      return ("dogpatch: \(error)\n", false)
    }
  }

  /// Follow the feed of new dogs, one line per dog as it arrives.
  /// - Parameters:
  ///   - cassette: The cassette file to replay or record.
  ///   - emit: Receives each line as soon as it is ready.
  /// - Returns: Whether the feed ended without an error (a failure is emitted as its last line).
  public func watch(cassette: URL, emit: @Sendable (String) -> Void) async -> Bool {
    do {
      emit("watching for new dogs...")
      for try await dog in try await client(cassette: cassette).newDogs() {
        emit(
          "new: #\(dog.id) \(dog.name), \(dog.breed), \(dog.age) \(dog.age == 1 ? "year" : "years"), "
            + DogTable.price(dog.price))
      }
      emit("the feed has ended")
      return true
    } catch let error as APIError {
      emit("dogpatch: \(Self.explain(error))")
      return false
    } catch {
      emit("dogpatch: \(error)")
      return false
    }
  }

  /// One line a person can act on.
  static func explain(_ error: APIError) -> String {
    switch error {
    case .unacceptableStatus(let response):
      return
        "the server refused the request with HTTP \(response.status). \(error.localizedDescription)"
    case .decoding:
      return "the server's answer is not a list of dogs. \(error.localizedDescription)"
    case .transport(let underlying as CassetteError):
      return underlying.description
    case .transport, .timedOut:
      return "the server cannot be reached. \(error.localizedDescription)"
    case .invalidRequest, .cancelled:
      return error.localizedDescription
    }
  }
}

/// A command line that cannot run.
public enum DogPatchCommandError: Error, Equatable {
  /// The user asked for help.
  case help
  /// What is wrong, in one line.
  case message(String)
}
