import Foundation

/// HTTP dates as RFC 9110 §5.6.7 writes them, read strictly: IMF-fixdate
/// (`Sun, 06 Nov 1994 08:49:37 GMT`) and the two obsolete forms, RFC 850
/// (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`), each exactly:
/// one space where the grammar has one, two digits where it has two, a comma where it has one,
/// `GMT` and no other zone, a day that the month has, hours to 23, minutes to 59 and seconds to 60
/// (a leap second). Day and month names compare without case (RFC 9110 asks recipients to be
/// robust with timestamps; no name can be misread for another). Anything else is not a date.
/// It reads every date Errand reads: `Date`, `Expires`, `Last-Modified`, `If-Modified-Since`
/// and `Retry-After`.
enum HTTPDate {
  private static let space = UInt8(ascii: " ")
  private static let comma = UInt8(ascii: ",")
  private static let dash = UInt8(ascii: "-")
  private static let colon = UInt8(ascii: ":")
  private static let dayNames = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
  private static let longDayNames = [
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
  ]
  private static let monthNames = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
  ]

  /// The date a field value holds, or `nil` when it is not an HTTP date.
  /// - Parameters:
  ///   - text: The field value; white space around it is ignored.
  ///   - now: The current date, for the two-digit year of an RFC 850 date: the year of the
  ///     century that puts it at most 50 years ahead of now.
  /// - Returns: The date, or `nil`.
  static func parse(_ text: String?, now: Date = Date()) -> Date? {
    guard let text else { return nil }
    let isWhiteSpace = { (byte: UInt8) in byte == space || byte == 0x09 }
    let trimmed = text.utf8.drop(while: isWhiteSpace).reversed().drop(while: isWhiteSpace)
    guard trimmed.count <= 40 else { return nil }
    let bytes = Array(trimmed.reversed())
    return imfFixdate(bytes) ?? rfc850(bytes, now: now) ?? asctime(bytes)
  }

  /// The date of field `name` in `headers`: `nil` when it is missing, is not a date, or comes in
  /// more than one field line (a date is a single value).
  /// - Parameters:
  ///   - name: The field's name.
  ///   - headers: The fields.
  ///   - now: The current date, for a two-digit year.
  /// - Returns: The date, or `nil`.
  static func parse(_ name: String, in headers: HTTPHeaders, now: Date = Date()) -> Date? {
    let values = headers.values(for: name)
    guard values.count == 1 else { return nil }
    return parse(values[0], now: now)
  }

  /// `Sun, 06 Nov 1994 08:49:37 GMT`
  private static func imfFixdate(_ bytes: [UInt8]) -> Date? {
    guard bytes.count == 29, name(bytes[0..<3], in: dayNames) != nil, bytes[3] == comma,
      bytes[4] == space, let day = number(bytes[5..<7]), bytes[7] == space,
      let month = name(bytes[8..<11], in: monthNames), bytes[11] == space,
      let year = number(bytes[12..<16]), bytes[16] == space,
      let time = time(bytes[17..<25]), bytes[25] == space, isGMT(bytes[26..<29])
    else { return nil }
    return date(year: year, month: month, day: day, time: time)
  }

  /// `Sunday, 06-Nov-94 08:49:37 GMT`
  private static func rfc850(_ bytes: [UInt8], now: Date) -> Date? {
    guard let position = bytes.firstIndex(of: comma),
      name(bytes[0..<position], in: longDayNames) != nil, bytes.count == position + 24
    else { return nil }
    let rest = Array(bytes[(position + 1)...])
    guard rest[0] == space, let day = number(rest[1..<3]), rest[3] == dash,
      let month = name(rest[4..<7], in: monthNames), rest[7] == dash,
      let shortYear = number(rest[8..<10]), rest[10] == space, let time = time(rest[11..<19]),
      rest[19] == space, isGMT(rest[20..<23])
    else { return nil }
    // RFC 9110 §5.6.7: a year that looks more than 50 years ahead is the last one in the past
    // with those two digits.
    let thisYear = civil(fromDays: Int((now.timeIntervalSince1970 / 86_400).rounded(.down))).year
    var year = thisYear - thisYear % 100 + shortYear
    if year > thisYear + 50 { year -= 100 }
    if year <= thisYear - 50 { year += 100 }
    return date(year: year, month: month, day: day, time: time)
  }

  /// `Sun Nov  6 08:49:37 1994`
  private static func asctime(_ bytes: [UInt8]) -> Date? {
    guard bytes.count == 24, name(bytes[0..<3], in: dayNames) != nil, bytes[3] == space,
      let month = name(bytes[4..<7], in: monthNames), bytes[7] == space,
      let day = bytes[8] == space ? number(bytes[9..<10]) : number(bytes[8..<10]),
      bytes[10] == space, let time = time(bytes[11..<19]), bytes[19] == space,
      let year = number(bytes[20..<24])
    else { return nil }
    return date(year: year, month: month, day: day, time: time)
  }

  /// `HH:MM:SS` as seconds into the day (a leap second counts as the next minute's first).
  private static func time(_ bytes: ArraySlice<UInt8>) -> Int? {
    let bytes = Array(bytes)
    guard bytes.count == 8, let hour = number(bytes[0..<2]), bytes[2] == colon,
      let minute = number(bytes[3..<5]), bytes[5] == colon, let second = number(bytes[6..<8]),
      hour <= 23, minute <= 59, second <= 60
    else { return nil }
    return hour * 3600 + minute * 60 + second
  }

  /// Digits only, as a number.
  private static func number(_ bytes: ArraySlice<UInt8>) -> Int? {
    guard !bytes.isEmpty, bytes.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
    return bytes.reduce(0) { $0 * 10 + Int($1 - 0x30) }
  }

  /// The position (from 1) of a name in `names`, compared without case.
  private static func name(_ bytes: ArraySlice<UInt8>, in names: [String]) -> Int? {
    let lowered = String(
      decoding: bytes.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
    return names.firstIndex(of: lowered).map { $0 + 1 }
  }

  private static func isGMT(_ bytes: ArraySlice<UInt8>) -> Bool {
    name(bytes, in: ["gmt"]) != nil
  }

  /// The date, when the month has the day.
  private static func date(year: Int, month: Int, day: Int, time: Int) -> Date? {
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    let lengths = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    guard (1...lengths[month - 1]).contains(day) else { return nil }
    let days = daysFromCivil(year: year, month: month, day: day)
    return Date(timeIntervalSince1970: Double(days) * 86_400 + Double(time))
  }

  /// The days from 1 January 1970 to a date of the proleptic Gregorian calendar (Howard
  /// Hinnant's `days_from_civil`).
  private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
    let year = month <= 2 ? year - 1 : year
    let era = (year >= 0 ? year : year - 399) / 400
    let yearOfEra = year - era * 400
    let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
  }

  /// The year of the date `days` after 1 January 1970 (Howard Hinnant's `civil_from_days`).
  private static func civil(fromDays days: Int) -> (year: Int, month: Int) {
    let shifted = days + 719_468
    let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
    let dayOfEra = shifted - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let shiftedMonth = (5 * dayOfYear + 2) / 153
    let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
    return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month)
  }
}
