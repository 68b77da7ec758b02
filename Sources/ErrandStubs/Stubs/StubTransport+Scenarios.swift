import Errand

/// Scenarios: the states routes require and move to (``StubResponse/inScenario(_:requires:movesTo:)``).
extension StubTransport {
  /// The state a scenario is in: ``StubScenario/started`` until a route or
  /// ``setScenario(_:to:)`` moves it.
  ///
  /// ```swift
  /// #expect(await stub.scenarioState("Dogs") == "Created")
  /// ```
  /// - Parameter name: The scenario's name.
  /// - Returns: Its state.
  public func scenarioState(_ name: String) -> String {
    scenarioStates[name] ?? StubScenario.started
  }

  /// Put a scenario in a state, as a route that moves it would: to start a test in the middle of
  /// a flow (logged in, a dog created).
  ///
  /// ```swift
  /// await stub.setScenario("Session", to: "LoggedIn")
  /// ```
  /// - Parameters:
  ///   - name: The scenario's name.
  ///   - state: The state it moves to.
  public func setScenario(_ name: String, to state: String) {
    scenarioStates[name] = state == StubScenario.started ? nil : state
  }

  /// Put every scenario back in ``StubScenario/started`` (WireMock's `resetAllScenarios`). Routes
  /// keep their call counts.
  public func resetScenarios() {
    scenarioStates = [:]
  }

  /// Whether a route's scenario lets it answer now: it has none, requires no state, or is in the
  /// state it requires.
  func scenarioAdmits(_ route: Route) -> Bool {
    guard let step = route.response.terms.scenario, let required = step.requires else {
      return true
    }
    return scenarioState(step.name) == required
  }

  /// Why a route's scenario keeps it from answering now (`requires scenario "Dogs" in state
  /// "Created"; it is "Started"`), or `nil` when it may answer. Only reports call it: the text
  /// is not free.
  func scenarioMiss(of route: Route) -> String? {
    guard !scenarioAdmits(route), let step = route.response.terms.scenario,
      let required = step.requires
    else { return nil }
    let state = scenarioState(step.name)
    return "requires scenario \(StubScenario.quoted(step.name)) in state "
      + "\(StubScenario.quoted(required)); it is \(StubScenario.quoted(state))"
  }

  /// Move the route's scenario to the state the route moves it to, if any: called in the same
  /// step as the match, so that no other call sees the state in between.
  func advanceScenario(of route: Route) {
    guard let step = route.response.terms.scenario, let next = step.movesTo else { return }
    setScenario(step.name, to: next)
  }
}
