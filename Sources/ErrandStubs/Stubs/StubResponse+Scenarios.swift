extension StubResponse {
  /// This answer, on a route that belongs to a scenario (WireMock's
  /// `inScenario(…).whenScenarioStateIs(…).willSetStateTo(…)`): it answers only while the
  /// scenario is in state `state`, and when it answers, the scenario moves to `next`.
  ///
  /// ```swift
  /// await stub.on(.get, "/v1/dogs", .json([Dog]()).inScenario("Dogs", requires: StubScenario.started))
  /// await stub.on(.post, "/v1/dogs", .status(201).inScenario("Dogs", movesTo: "Created"))
  /// await stub.on(.get, "/v1/dogs", .json([rex]).inScenario("Dogs", requires: "Created"))
  /// ```
  /// Every scenario starts in ``StubScenario/started``. A route whose scenario is in another
  /// state does not match: the next route is tried, and a request that no route answers says,
  /// for each close route, which state it waits for (`requires scenario "Dogs" in state
  /// "Created"; it is "Started"`). The state moves in the same step as the match, so of two
  /// calls at once only one sees the old state. It moves when the route is chosen, before its
  /// delay, sequence, handler or stream is worked out, and on each hop of a redirect that the
  /// stub follows.
  ///
  /// The scenario is the route's: on an answer inside a ``sequence(_:)`` or returned by a
  /// ``handler(_:)`` it has no effect.
  /// - Parameters:
  ///   - name: The scenario's name.
  ///   - state: The state the scenario must be in for the route to answer; `nil` for any.
  ///   - next: The state the scenario moves to when the route answers; `nil` to leave it.
  /// - Returns: The answer.
  public func inScenario(_ name: String, requires state: String? = nil, movesTo next: String? = nil)
    -> StubResponse
  {
    var copy = self
    copy.terms.scenario = StubScenario.Step(name: name, requires: state, movesTo: next)
    return copy
  }
}
