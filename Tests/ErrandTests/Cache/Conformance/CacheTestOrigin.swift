import Errand
import ErrandTesting
import Foundation

/// The suite's server (`test-engine/server/handle-test.mjs`) for one test, as a `StubTransport`
/// handler: it answers request N of the test with the test's request N (named by the client's
/// `Req-Num` header), renders the magic dates and locations once, answers a conditional request
/// with `304` where the test expects a validation (`999` when the request was not conditional),
/// records every request it sees, and closes the connection where the test says so.
actor CacheTestOrigin {
  /// What the server saw of one request, and the headers it sent that the client checks.
  struct Seen: Sendable {
    var requestNumber: Int?
    var method: String
    var headers: HTTPHeaders
    var checkedHeaders: [(name: String, value: String)]
  }

  /// The statuses that never have a body.
  static let noBodyStatuses: Set<Int> = [204, 304]
  /// The headers whose integer values are dates, seconds from the server's now.
  static let dateHeaders: Set<String> = [
    "date", "expires", "last-modified", "if-modified-since", "if-unmodified-since",
  ]
  /// The headers `magic_locations` makes full paths.
  static let locationHeaders: Set<String> = ["location", "content-location"]

  let requests: [CacheTestRequest]
  let uuid: String
  let clock: TestClock
  let wallClock: CacheTestWallClock
  private(set) var seen: [Seen] = []
  /// The response headers of each request as first rendered: the suite's server rewrites its
  /// configuration in place, so a magic value keeps the date of the first response that sent it.
  private var rendered: [Int: [CacheTestHeader]] = [:]

  init(requests: [CacheTestRequest], uuid: String, clock: TestClock, wallClock: CacheTestWallClock)
  {
    self.requests = requests
    self.uuid = uuid
    self.clock = clock
    self.wallClock = wallClock
  }

  /// The answer to `request`.
  func answer(_ request: HTTPRequest) async throws -> StubResponse {
    let serverNumber = seen.count + 1
    let clientNumber = request.headers["Req-Num"].flatMap { Int($0) }
    let number = clientNumber ?? serverNumber
    guard requests.indices.contains(number - 1) else {
      return .status(409, body: Data("config not found for request \(serverNumber)".utf8))
    }
    let config = requests[number - 1]
    if let pause = config.responsePause {
      // The server takes this long to answer: the test's time passes meanwhile.
      await clock.advance(by: .seconds(pause))
    }
    let now = wallClock.milliseconds
    var status = config.responseStatus ?? 200
    if let expected = config.expectedType,
      expected == .lmValidated || expected == .etagValidated, number >= 2
    {
      let previous = rendered[number - 2] ?? requests[number - 2].responseHeaders ?? []
      status = 999
      if let modified = Self.last("Last-Modified", in: previous),
        request.headers["If-Modified-Since"] == modified
      {
        status = 304
      }
      if let etag = Self.last("ETag", in: previous), request.headers["If-None-Match"] == etag {
        status = 304
      }
    }
    let base = Self.target(of: request.url)
    var headers: HTTPHeaders = [
      "Server-Base-Url": base, "Server-Request-Count": String(serverNumber),
      "Client-Request-Count": clientNumber.map(String.init) ?? "NaN",
      "Server-Now": String(now),
    ]
    var checked: [(name: String, value: String)] = []
    let configured =
      rendered[number - 1]
      ?? (config.responseHeaders ?? []).map {
        Self.render($0, now: now, base: base, config: config)
      }
    rendered[number - 1] = configured
    for header in configured {
      headers.add(header.name, header.value ?? "")
      if header.check != false {
        checked.removeAll { $0.name == header.name }
        checked.append(
          (header.name, headers.values(for: header.name).joined(separator: ", ")))
      }
    }
    if headers["Content-Type"] == nil {
      headers["Content-Type"] = "text/plain"
    }
    if headers["Date"] == nil {
      // Node's server sends the date of every response that sets none.
      headers["Date"] = CacheTestDate.string(now, format: .imfFixdate)
    }
    seen.append(
      Seen(
        requestNumber: clientNumber, method: request.method.rawValue, headers: request.headers,
        checkedHeaders: checked))
    headers["Request-Numbers"] = seen.map { $0.requestNumber.map(String.init) ?? "NaN" }
      .joined(separator: " ")
    if config.disconnect == true {
      return .error(URLError(.networkConnectionLost))
    }
    var body = Data()
    if !Self.noBodyStatuses.contains(status) {
      let configuredBody = config.responseBody ?? ""
      body = Data((configuredBody.isEmpty ? uuid : configuredBody).utf8)
    }
    return .status(status, body: body, headers: headers)
  }

  /// The last value the suite's `getHeader` finds for `name`, if it was rendered as text.
  static func last(_ name: String, in headers: [CacheTestHeader]) -> String? {
    headers.last { $0.name.lowercased() == name.lowercased() }?.value
  }

  /// What Node's `request.url` holds: the path and query.
  static func target(of url: URL) -> String {
    let components = URLComponents(url: url, resolvingAgainstBaseURL: true)
    let path = components?.percentEncodedPath ?? url.path
    return components?.percentEncodedQuery.map { path + "?" + $0 } ?? path
  }

  /// `header` as the suite's `fixupHeader` writes it: a magic date from `now`, a magic location
  /// under `base`.
  static func render(
    _ header: CacheTestHeader, now: Int64?, base: String?, config: CacheTestRequest
  ) -> CacheTestHeader {
    var header = header
    let name = header.name.lowercased()
    if let delta = header.delta {
      if dateHeaders.contains(name) {
        let format: CacheTestDate.Format =
          (config.rfc850date ?? []).contains(name) ? .rfc850 : .imfFixdate
        header.value =
          now.map { CacheTestDate.string($0 + Int64(delta) * 1000, format: format) }
          ?? "Invalid Date"
      } else {
        header.value = String(delta)
      }
      header.delta = nil
    }
    if locationHeaders.contains(name), config.magicLocations == true {
      let value = header.value ?? ""
      header.value = value.isEmpty ? (base ?? "undefined") : "\(base ?? "undefined")/\(value)"
    }
    return header
  }
}

/// The test's wall clock: a fixed instant plus the time the test's `TestClock` has advanced, so
/// that the server's dates and the cache's now agree whatever the machine's clock says.
struct CacheTestWallClock: Sendable {
  /// 1 January 2026, 00:00:00 GMT, in milliseconds since 1970.
  static let epoch: Int64 = 1_767_225_600_000
  let clock: TestClock

  /// Milliseconds since 1970.
  var milliseconds: Int64 {
    let offset = clock.now.offset.components
    return Self.epoch + offset.seconds * 1000 + offset.attoseconds / 1_000_000_000_000_000
  }

  /// Now, as a date.
  var date: Date {
    Date(timeIntervalSince1970: Double(milliseconds) / 1000)
  }
}

/// Dates as the suite's `httpDate` writes them (JavaScript's `toGMTString`, or RFC 850).
enum CacheTestDate {
  enum Format {
    case imfFixdate, rfc850
  }

  static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
  static let longDays = [
    "Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday",
  ]
  static let months = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
  ]

  /// The date `milliseconds` after 1970 (rounded down to the second) in `format`.
  static func string(_ milliseconds: Int64, format: Format) -> String {
    let seconds = Int64((Double(milliseconds) / 1000).rounded(.down))
    let days = Int((Double(seconds) / 86_400).rounded(.down))
    let secondOfDay = Int(seconds - Int64(days) * 86_400)
    let (year, month, day) = civil(fromDays: days)
    let weekday = ((days % 7) + 11) % 7  // 1 January 1970 was a Thursday
    func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
    let time = "\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60))"
    switch format {
    case .imfFixdate:
      return "\(Self.days[weekday]), \(two(day)) \(months[month - 1]) \(year) \(time) GMT"
    case .rfc850:
      return "\(longDays[weekday]), \(two(day))-\(months[month - 1])-\(two(year % 100)) \(time) GMT"
    }
  }

  /// The year, month and day `days` after 1 January 1970 (Howard Hinnant's `civil_from_days`).
  static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
    let shifted = days + 719_468
    let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
    let dayOfEra = shifted - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let shiftedMonth = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
    let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
    return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
  }
}
