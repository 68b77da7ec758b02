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
    // Fingerprints, never the values: `Vary` may name a header that holds a secret the
    // redaction does not (the client's own tenant key, say).
    // (The credentials' own entry is a fingerprint already.)
    varying = Dictionary(
      uniqueKeysWithValues: entry.varying.map { name, value in
        (name, name == CacheEntry.credentialsKey ? value : value.map(Self.fingerprint))
      })
    body = entry.response.body
    storedAt = Date()
    initialAge = Double(entry.age.components.seconds)
    lifetime = entry.lifetime.map { Double($0.components.seconds) }
  }

  /// What the record keeps of a `Vary` value: 128 bits of hash, so that a secret header's value
  /// never reaches the disk.
  static func fingerprint(_ value: String) -> String {
    DiskCacheStore.hash(value, seed: 6) + DiskCacheStore.hash(value, seed: 7)
  }

  /// The most seconds an age, a lifetime or a time on disk may be: 2^32 s (136 years), past the
  /// 2^31 s RFC 9111 §1.2.2 caps ages and lifetimes at.
  static let longest: Double = 4_294_967_296
  /// The most a record's time of storing may be ahead of the wall clock (set back since): a day.
  static let mostAhead: Double = 86_400

  /// The entry again, answering `request`, aged by the wall time since it was stored; `nil` when
  /// the record makes no sense: another format, a status the cache never stores, an age, a
  /// lifetime or a time on disk that is negative, not finite or beyond ``longest``, a header that
  /// is not a name and a value or could not be sent, `Vary` values under names that are not
  /// lowercase header names, or more of them than a stored response may vary on.
  func entry(for request: HTTPRequest, clock: any Clock<Duration>) -> CacheEntry? {
    let since = Date().timeIntervalSince(storedAt)
    guard format == Self.format, CacheEntry.isFinal(status),
      (0...Self.longest).contains(initialAge),
      lifetime.map({ (0...Self.longest).contains($0) }) ?? true,
      (-Self.mostAhead...Self.longest).contains(since),
      varying.keys.filter({ $0 != CacheEntry.credentialsKey }).count
        <= CacheEntry.mostVaryingHeaders,
      varying.keys.allSatisfy({ $0 == $0.lowercased() }),
      HTTPHeaders(
        varying.filter { $0.key != CacheEntry.credentialsKey }.map {
          HTTPHeaders.Field(name: $0.key, value: $0.value ?? "")
        }
      ).validationProblem == nil,
      self.headers.allSatisfy({ $0.count == 2 })
    else { return nil }
    var headers = HTTPHeaders()
    for pair in self.headers {
      headers.add(pair[0], pair[1])
    }
    guard headers.validationProblem == nil else { return nil }
    var response = HTTPResponse(status: status, headers: headers, body: body, url: request.url)
    response.request = request
    // The stored fingerprints as `request`'s own values where they match, and a value no
    // request carries (a line feed) where they do not.
    var restored: [String: String?] = [:]
    for (name, stored) in varying {
      guard name != CacheEntry.credentialsKey else {
        restored[name] = .some(stored)
        continue
      }
      guard let stored else {
        restored[name] = .some(nil)
        continue
      }
      let actual = CacheEntry.value(of: name, in: request)
      restored[name] = .some(actual.flatMap { Self.fingerprint($0) == stored ? $0 : nil } ?? "\n")
    }
    return CacheEntry(
      response: response, varying: restored, initialAge: .seconds(initialAge + max(0, since)),
      stored: Stopwatch(clock), lifetime: lifetime.map { .seconds($0) })
  }
}
