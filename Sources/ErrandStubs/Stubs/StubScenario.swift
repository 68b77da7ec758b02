/// Scenarios: named states that a ``StubTransport``'s routes require and move to, for flows whose
/// answers depend on what came before (WireMock's scenarios): a list that shows a dog once it was
/// created, a 401 once the user logged out.
///
/// ```swift
/// await stub.on(.get, "/v1/dogs", .json([Dog]()).inScenario("Dogs", requires: StubScenario.started))
/// await stub.on(.post, "/v1/dogs", .status(201).inScenario("Dogs", movesTo: "Created"))
/// await stub.on(.get, "/v1/dogs", .json([rex]).inScenario("Dogs", requires: "Created"))
/// ```
///
/// Every scenario is in state ``started`` until a route or the test moves it
/// (``StubTransport/setScenario(_:to:)``); ``StubTransport/scenarioState(_:)`` reads it and
/// ``StubTransport/resetScenarios()`` puts every scenario back. Names and states are compared as
/// Swift strings: `"Café"` written with one accented letter or with a combining accent is the
/// same name.
public enum StubScenario {
  /// The state every scenario starts in, and returns to on ``StubTransport/resetScenarios()``:
  /// `Started`, as in WireMock.
  public static let started = "Started"

  /// A route's place in a scenario: the state it requires, if any, and the state it moves the
  /// scenario to when it answers, if any.
  struct Step: Sendable {
    var name: String
    var requires: String?
    var movesTo: String?
  }

  /// A name or state as a report quotes it: in quotes, with what could disguise it escaped, cut to
  /// a few hundred characters, so that an empty or odd name still reads as one.
  static func quoted(_ text: String) -> String {
    DiagnosticText.quoted(text)
  }
}
