import Foundation

/// HAR's dates: ISO 8601, written in UTC with milliseconds (`2024-03-01T09:30:00.125Z`), read with
/// or without a fraction and with `Z`, an offset (`+01:00`, `+0100`) or no zone (UTC). Written
/// and read by hand: a date read back writes the same text, on every platform.
enum HARDate {
  /// The first and last milliseconds a four-digit year can write.
  private static let range: ClosedRange<Int64> = -62_135_596_800_000...253_402_300_799_999

  /// The date, rounded to the millisecond, as `yyyy-MM-ddTHH:mm:ss.SSSZ`.
  static func string(_ date: Date) -> String {
    let raw = (date.timeIntervalSince1970 * 1000).rounded()
    let milliseconds =
      raw.isFinite
      ? Int64(min(max(raw, Double(range.lowerBound)), Double(range.upperBound))) : 0
    let days = floorDivide(milliseconds, 86_400_000)
    let ofDay = milliseconds - days * 86_400_000
    let (year, month, day) = civil(fromDays: days)
    return pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T"
      + pad(ofDay / 3_600_000, 2) + ":" + pad(ofDay / 60_000 % 60, 2) + ":"
      + pad(ofDay / 1000 % 60, 2) + "." + pad(ofDay % 1000, 3) + "Z"
  }

  /// The date `text` says, to the millisecond (further digits are dropped), or `nil`.
  static func date(_ text: String) -> Date? {
    var reader = Reader(bytes: Array(text.utf8))
    guard let year = reader.digits(4), reader.skip("-"), let month = reader.digits(2),
      reader.skip("-"), let day = reader.digits(2),
      reader.skip("T") || reader.skip("t") || reader.skip(" "),
      let hour = reader.digits(2), reader.skip(":"), let minute = reader.digits(2),
      reader.skip(":"), let second = reader.digits(2),
      (1...12).contains(month), (1...daysIn(month, of: year)).contains(day),
      (0...23).contains(hour),
      (0...59).contains(minute), (0...60).contains(second)
    else { return nil }
    var milliseconds: Int64 = 0
    if reader.skip(".") || reader.skip(",") {
      var scale: Int64 = 100
      var count = 0
      while let digit = reader.digit() {
        milliseconds += Int64(digit) * scale
        scale /= 10
        count += 1
      }
      guard count > 0 else { return nil }
    }
    var offset: Int64 = 0
    if reader.skip("Z") || reader.skip("z") || reader.atEnd {
      offset = 0
    } else if let sign: Int64 = reader.skip("+") ? 1 : reader.skip("-") ? -1 : nil,
      let hours = reader.digits(2)
    {
      _ = reader.skip(":")
      let minutes = reader.digits(2) ?? 0
      guard hours <= 23, minutes <= 59 else { return nil }
      offset = sign * (hours * 60 + minutes) * 60_000
    } else {
      return nil
    }
    guard reader.atEnd else { return nil }
    let seconds =
      days(fromYear: year, month: month, day: day) * 86_400 + hour * 3600
      + minute * 60 + min(second, 59)
    return Date(timeIntervalSince1970: Double(seconds * 1000 + milliseconds - offset) / 1000)
  }

  // MARK: Calendar arithmetic (proleptic Gregorian, Howard Hinnant's algorithms)

  /// How many days `month` has in `year` (Gregorian: February has 29 in a leap year).
  private static func daysIn(_ month: Int64, of year: Int64) -> Int64 {
    switch month {
    case 2:
      year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
    case 4, 6, 9, 11: 30
    default: 31
    }
  }

  private static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
    let shifted = days + 719_468
    let era = floorDivide(shifted, 146_097)
    let dayOfEra = shifted - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let monthIndex = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
    let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
    return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
  }

  private static func days(fromYear year: Int64, month: Int64, day: Int64) -> Int64 {
    let shiftedYear = month <= 2 ? year - 1 : year
    let era = floorDivide(shiftedYear, 400)
    let yearOfEra = shiftedYear - era * 400
    let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
  }

  private static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
    value >= 0 ? value / divisor : (value - divisor + 1) / divisor
  }

  private static func pad(_ value: Int64, _ width: Int) -> String {
    let digits = String(value)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
  }

  private struct Reader {
    let bytes: [UInt8]
    var index = 0

    var atEnd: Bool { index == bytes.count }

    mutating func skip(_ character: Character) -> Bool {
      guard let ascii = character.asciiValue, index < bytes.count, bytes[index] == ascii else {
        return false
      }
      index += 1
      return true
    }

    mutating func digit() -> Int? {
      guard index < bytes.count, (0x30...0x39).contains(bytes[index]) else { return nil }
      index += 1
      return Int(bytes[index - 1] - 0x30)
    }

    mutating func digits(_ count: Int) -> Int64? {
      var value: Int64 = 0
      for _ in 0..<count {
        guard let digit = digit() else { return nil }
        value = value * 10 + Int64(digit)
      }
      return value
    }
  }
}
