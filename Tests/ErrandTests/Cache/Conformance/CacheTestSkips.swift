/// The suite's tests this port leaves out, and the required tests it runs but excuses, each with
/// its reason (Sources/Errand/Errand.docc/Caching.md lists them for users).
enum CacheTestSkips {
  /// Why `test` is not run, or `nil` when it is: what it tests is not a private client cache's.
  static func outOfScope(_ test: CacheTest) -> String? {
    if test.cdnOnly {
      return "CDN-Cache-Control (RFC 9213) is for CDNs, not for a client's private cache"
    }
    return notRun[test.id]
  }

  /// The tests not run, by identifier.
  static let notRun: [String: String] = {
    var reasons: [String: String] = [:]
    let shared = "a shared cache's rule (RFC 9111 §3.5, §5.2.2): Errand's cache is private"
    for id in [
      "freshness-s-maxage-shared", "freshness-max-age-s-maxage-shared-longer",
      "freshness-max-age-s-maxage-shared-longer-reversed",
      "freshness-max-age-s-maxage-shared-longer-multiple",
      "freshness-max-age-s-maxage-shared-shorter",
      "freshness-max-age-s-maxage-shared-shorter-expires", "cc-resp-private-shared",
      "stale-close-proxy-revalidate", "stale-close-s-maxage=2", "other-authorization",
      "other-authorization-public", "other-authorization-must-revalidate",
      "other-authorization-smaxage",
    ] {
      reasons[id] = shared
    }
    let interim =
      "interim (1xx) responses: Errand's transports hand the final response only to the chain"
    for id in ["interim-102", "interim-103", "interim-not-cached", "interim-no-header-reuse"] {
      reasons[id] = interim
    }
    return reasons
  }()

  /// A required test that runs but is excused.
  enum Deviation: Sendable {
    /// It fails on purpose, for this reason.
    case fails(String)
    /// Its prerequisite is answered the other way on purpose, so the suite does not judge it;
    /// it passes when run on its own.
    case notJudged(String)
  }

  /// The required tests excused, by identifier.
  static let deviations: [String: Deviation] = {
    let cookies = Deviation.fails(
      "Errand never stores Set-Cookie (nor Set-Cookie2): a cookie belongs to the caller who "
        + "received it, and clients that share one HTTPCache must not be handed each other's "
        + "sessions; browsers' caches do not expose it either")
    let staleOnlyWhenAllowed = Deviation.notJudged(
      "its prerequisite, the check stale-close, asks whether a stale response stands in when "
        + "the server closes the connection; Errand lets one stand in only where the response "
        + "allows it (stale-if-error, RFC 5861), as RFC 9111 §4.2.4 asks, so the suite does "
        + "not judge this test; run on its own, it passes")
    return [
      "headers-store-Set-Cookie": cookies,
      "headers-store-Set-Cookie2": cookies,
      "stale-close-must-revalidate": staleOnlyWhenAllowed,
      "stale-close-no-cache": staleOnlyWhenAllowed,
    ]
  }()
}
