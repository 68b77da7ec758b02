import Foundation

/// The date of a cookie's `Expires` attribute, read by the algorithm RFC 6265bis §5.1.1 requires
/// of every user agent: tolerant of the forms servers really send (`Wed, 09-Jun-2021 10:18:14
/// GMT`, `Thu Jan  1 00:00:00 1970`, two-digit years), and failing on anything without a time,
/// a day, a month and a year in range. Unlike `HTTPDate` (the strict form of RFC 9110), which
/// the cache uses.
enum CookieDate {
  /// The date `text` denotes, in UTC, or `nil` when it does not denote one.
  static func parse(_ text: String) -> Date? {
    var time: (hour: Int, minute: Int, second: Int)?
    var day: Int?
    var month: Int?
    var year: Int?
    for token in tokens(of: Array(text.utf8)) {
      if time == nil, let found = self.time(token) {
        time = found
      } else if day == nil, let found = number(token, digits: 1...2) {
        day = found
      } else if month == nil, let found = self.month(token) {
        month = found
      } else if year == nil, let found = number(token, digits: 2...4) {
        year = found
      }
    }
    guard let time, let day, let month, var year else { return nil }
    if (70...99).contains(year) { year += 1900 }
    if (0...69).contains(year) { year += 2000 }
    guard (1...31).contains(day), year >= 1601, time.hour <= 23, time.minute <= 59,
      time.second <= 59
    else { return nil }
    let components = DateComponents(
      year: year, month: month, day: day, hour: time.hour, minute: time.minute,
      second: time.second)
    guard let date = calendar.date(from: components),
      calendar.component(.day, from: date) == day, calendar.component(.month, from: date) == month
    else { return nil }  // 31 February and the like: no such date
    return date
  }

  /// The Gregorian calendar in UTC.
  private static let calendar: Calendar = {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
    return calendar
  }()

  /// The date-tokens: runs of non-delimiters.
  private static func tokens(of bytes: [UInt8]) -> [ArraySlice<UInt8>] {
    bytes.split(whereSeparator: isDelimiter)
  }

  /// `%x09 / %x20-2F / %x3B-40 / %x5B-60 / %x7B-7E`.
  private static func isDelimiter(_ byte: UInt8) -> Bool {
    byte == 0x09 || (0x20...0x2F).contains(byte) || (0x3B...0x40).contains(byte)
      || (0x5B...0x60).contains(byte) || (0x7B...0x7E).contains(byte)
  }

  /// `digits` digits at the start of `token`, followed by nothing or by a non-digit and anything.
  private static func number(_ token: ArraySlice<UInt8>, digits: ClosedRange<Int>) -> Int? {
    let leading = token.prefix { (0x30...0x39).contains($0) }
    guard digits.contains(leading.count) else { return nil }
    return leading.reduce(0) { $0 * 10 + Int($1 - 0x30) }
  }

  /// `hms-time [ non-digit *OCTET ]`: three fields of one or two digits joined by colons.
  private static func time(_ token: ArraySlice<UInt8>) -> (Int, Int, Int)? {
    var fields: [Int] = []
    var rest = token[...]
    for index in 0..<3 {
      let digits = rest.prefix { (0x30...0x39).contains($0) }
      guard (1...2).contains(digits.count) else { return nil }
      fields.append(digits.reduce(0) { $0 * 10 + Int($1 - 0x30) })
      rest = rest.dropFirst(digits.count)
      if index < 2 {
        guard rest.first == UInt8(ascii: ":") else { return nil }
        rest = rest.dropFirst()
      } else if let next = rest.first, (0x30...0x39).contains(next) {
        return nil
      }
    }
    return (fields[0], fields[1], fields[2])
  }

  /// A month's number from a token that starts with its first three letters, in any case.
  private static func month(_ token: ArraySlice<UInt8>) -> Int? {
    guard token.count >= 3 else { return nil }
    let name = String(decoding: token.prefix(3), as: UTF8.self).lowercased()
    return months.firstIndex(of: name).map { $0 + 1 }
  }

  private static let months = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
  ]
}
