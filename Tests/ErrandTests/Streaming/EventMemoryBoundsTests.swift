import Foundation
import Testing

@testable import Errand

/// What a hostile server can make an event stream hold: one event's worth, not one per field or
/// one per line. The parser and the line splitter are driven directly, with small limits.
@Suite(.timeLimit(.minutes(3))) struct EventMemoryBoundsTests {
  /// After a long line, each later line holds only its own bytes. The splitter kept the long
  /// line's buffer capacity and handed a new buffer that large to every line after it: a 256 KiB
  /// chunk of line endings after a 40 MB line took 18 s and 1.9 GB of memory.
  @Test(arguments: [false, true])
  func linesAfterALongLineHoldOnlyTheirOwnBytes(endsAtLoneCarriageReturn: Bool) throws {
    var splitter = LineSplitter(endsAtLoneCarriageReturn: endsAtLoneCarriageReturn)
    let long = try splitter.pushBytes(Data(repeating: UInt8(ascii: "x"), count: 1_000_000) + [10])
    #expect(long.map(\.count) == [1_000_000])
    let lines = try splitter.pushBytes(Data("a\n\nbc\r\n\n".utf8))
    #expect(lines == [Array("a".utf8), [], Array("bc".utf8), []])
    #expect(lines.allSatisfy { $0.capacity < 1024 }, "\(lines.map(\.capacity))")
  }

  /// Streams whose event holds more than the limit of 1000 bytes in all, though no field or line
  /// crosses it: the type and the last event ID are held with the data, so they count with it.
  /// The server could make one event hold the limit three times over (data, type, ID), and the
  /// line being read a fourth time.
  static let overTheLimit: [(String, String)] = [
    ("type and data", "event: \(x(600))\ndata: \(x(600))\n\n"),
    ("ID and data", "id: \(x(600))\ndata: \(x(600))\n\n"),
    ("ID and type", "id: \(x(600))\nevent: \(x(600))\ndata: a\n\n"),
    ("an ID kept from an earlier event", "id: \(x(600))\ndata: a\n\ndata: \(x(600))\n\n"),
    ("many empty data lines", String(repeating: "data\n", count: 1001) + "\n"),
  ]

  /// `count` letters.
  static func x(_ count: Int) -> String { String(repeating: "x", count: count) }

  @Test(arguments: overTheLimit)
  func anEventIsBoundedAsAWhole(name: String, wire: String) throws {
    var parser = ServerSentEventParser(maximumLength: 1000)
    #expect(throws: LineTooLongError(unit: .event, limit: 1000)) {
      _ = try parser.push(Data(wire.utf8))
    }
  }

  /// An event whose data, type and ID together are within the limit is read, byte by byte too.
  @Test(arguments: [false, true]) func anEventWithinTheLimitIsRead(bytewise: Bool) throws {
    let wire = "id: \(Self.x(300))\nevent: \(Self.x(300))\ndata: \(Self.x(300))\n\n"
    var parser = ServerSentEventParser(maximumLength: 1000)
    var events: [ServerSentEvent] = []
    for chunk in bytewise ? Data(wire.utf8).map({ Data([$0]) }) : [Data(wire.utf8)] {
      events += try parser.push(chunk)
    }
    #expect(events == [ServerSentEvent(event: Self.x(300), data: Self.x(300), id: Self.x(300))])
  }

  /// The starting ID (a reconnection's, or the endpoint's `Last-Event-ID`) counts too.
  @Test func theStartingIDCounts() throws {
    var parser = ServerSentEventParser(maximumLength: 1000, lastEventID: Self.x(600))
    #expect(throws: LineTooLongError(unit: .event, limit: 1000)) {
      _ = try parser.push(Data("data: \(Self.x(600))\n\n".utf8))
    }
  }
}
