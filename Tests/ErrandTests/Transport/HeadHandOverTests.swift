import Foundation
import Testing

@testable import Errand

/// The rule every transport keeps for when a head goes to its caller, on its own.
@Suite(.timeLimit(.minutes(3))) struct HeadHandOverTests {
  static let head = HTTPResponse(status: 200, headers: ["X-Head": "1"])

  /// A streamed call's head goes at once; a buffered call's is held until its body ends or
  /// backs up, then goes once.
  @Test(arguments: [true, false])
  func aHeadGoesOnceAtArrivalOrAtRelease(streams: Bool) {
    var rule = HeadHandOver(streams: streams)
    #expect(rule.callerWaits)
    let atArrival = rule.arrived(Self.head)
    #expect((atArrival != nil) == streams)
    #expect(rule.callerWaits == !streams)
    let atRelease = rule.release()
    #expect((atRelease != nil) == !streams)
    #expect(atRelease?.headers["X-Head"] == (streams ? nil : "1"))
    #expect(!rule.callerWaits)
    #expect(rule.release() == nil)
    #expect(rule.arrived(Self.head) == nil)
  }

  /// A wait that ended another way (a failure, a deadline) drops a held head: nothing is handed
  /// over after it.
  @Test(arguments: [true, false])
  func aClosedWaitHandsNothingOver(streams: Bool) {
    var rule = HeadHandOver(streams: streams)
    if !streams { _ = rule.arrived(Self.head) }
    rule.close()
    #expect(!rule.callerWaits)
    #expect(rule.release() == nil)
    #expect(rule.arrived(Self.head) == nil)
  }
}
