import Foundation

/// What a file of the disk store holds: a response without its URL or any secret, its `Vary`
/// values, when it was stored (wall time, since a client's clock does not outlive the process) and
/// how old and how long fresh it was then.
struct DiskCacheRecord: Codable {
  /// 2: `varying` tells a header the request did not carry (`null`) from an empty one.
  static let format = 2
  var format: Int
  /// A second hash of the URL, to tell a file name's collision from a match.
  var check: String
  var status: Int
  var headers: [[String]]
  var varying: [String: String?]
  var body: Data
  var storedAt: Date
  var initialAge: Double
  var lifetime: Double?

  /// The record for `entry`, or `nil` when writing it would put a secret on disk: a `Vary` on a
  /// hidden header, or the body of an answer to a request with credentials when not allowed.
  init?(_ entry: CacheEntry, redaction: Redaction, storesAuthenticatedResponses: Bool) {
    guard let request = entry.response.request else { return nil }
    let redaction = redaction.merging(request.redaction)
    guard !entry.varying.keys.contains(where: redaction.hidesHeader) else { return nil }
    guard
      storesAuthenticatedResponses
        || !CacheEntry.isAuthenticated(request, redaction: redaction)
    else { return nil }
    format = Self.format
    check = DiskCacheStore.hash(CacheEntry.key(for: request.url), seed: 1)
    status = entry.response.status
    headers = entry.response.headers.fields.filter { !redaction.hidesHeader($0.name) }.map {
      [$0.name, $0.value]
    }
    varying = entry.varying
    body = entry.response.body
    storedAt = Date()
    initialAge = Double(entry.age.components.seconds)
    lifetime = entry.lifetime.map { Double($0.components.seconds) }
  }

  /// The most seconds an age or a lifetime read back may be: far past any freshness (2^31 s,
  /// RFC 9111's ceiling, four times over), and far below what a `Duration` can hold.
  static let longestSeconds = 4 * (Double(Int32.max) + 1)

  /// The entry again, answering `request`, aged by the wall time since it was stored; `nil` when
  /// the record holds a number no writer could have written (a corrupted or forged file: an age
  /// or lifetime that is negative, not finite or absurdly large), which is then a miss.
  func entry(for request: HTTPRequest, clock: any Clock<Duration>) -> CacheEntry? {
    let range = 0...Self.longestSeconds
    guard range.contains(initialAge), lifetime.map(range.contains) ?? true else { return nil }
    let elapsed = Date().timeIntervalSince(storedAt)
    // A clock set back shows no time passed; one far ahead (or a date decades old) ages the
    // entry to the ceiling, stale for good.
    let since = elapsed.isNaN ? Self.longestSeconds : min(max(0, elapsed), Self.longestSeconds)
    var headers = HTTPHeaders()
    for pair in self.headers where pair.count == 2 {
      headers.add(pair[0], pair[1])
    }
    var response = HTTPResponse(status: status, headers: headers, body: body, url: request.url)
    response.request = request
    return CacheEntry(
      response: response, varying: varying, initialAge: .seconds(initialAge + since),
      stored: Stopwatch(clock), lifetime: lifetime.map { .seconds($0) })
  }
}
