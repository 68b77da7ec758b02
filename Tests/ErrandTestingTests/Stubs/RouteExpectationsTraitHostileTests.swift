import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

/// Probes that need a test of their own: the `.stubbed` trait checks each one when it ends, so an
/// issue recorded twice fails it.
@Suite(.timeLimit(.minutes(3))) struct RouteExpectationsTraitHostileTests {
  @Test(.stubbed) func aRouteCheckedByVerifyAllRoutesUsedIsNotReportedAgainByTheTrait() async {
    let stub = StubTransport.current
    await stub.on(.get, "/v1/dogs", .json([Dog]()).times(2))
    await withKnownIssue {
      _ = await stub.verifyAllRoutesUsed()
    } matching: { issue in
      issue.comments.map(\.rawValue) == [
        "StubTransport route GET /v1/dogs was expected 2 times and was called 0 times"
      ]
    }
  }

  @Test(.stubbed) func aHandlerThatMovesTheScenarioItselfDoesNotDeadlock() async throws {
    let stub = StubTransport.current
    await stub.on(
      .get, "/v1/x",
      .handler { _, _ in
        await stub.setScenario("S", to: "Handled")
        return .status(await stub.scenarioState("S") == "Handled" ? 200 : 500)
      }.inScenario("S", movesTo: "Routed"))
    await stub.on(.get, "/v1/y", .status(204).inScenario("S", requires: "Handled"))
    #expect(try await stub.send(request(.get, "/v1/x")).status == 200)
    #expect(try await stub.send(request(.get, "/v1/y")).status == 204)
  }
}
