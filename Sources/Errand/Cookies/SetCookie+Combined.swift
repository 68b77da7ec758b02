import Foundation

extension SetCookie {
  /// The `Set-Cookie` field values in `combined`, one value that joins several with commas, as
  /// `HTTPURLResponse` gives them (it keeps one value per header name).
  ///
  /// A comma starts another field when what follows it, spaces aside, is a cookie name and `=`
  /// (or `=` alone, for a cookie without a name): so the comma in an `Expires` date
  /// (`Wed, 21 Oct 2015 07:28:00 GMT`) stays where it is. A value that holds a comma followed by
  /// `name=`, which RFC 6265 does not allow in a cookie's value, is split there: the one reading
  /// a joined value cannot tell it apart.
  /// - Parameter combined: The joined value.
  /// - Returns: The fields, trimmed of spaces, tabs and stray commas, in their order; none for an
  ///   empty value.
  static func fields(inCombined combined: String) -> [String] {
    let scalars = Array(combined.unicodeScalars)
    var fields: [String] = []
    var start = 0
    for index in scalars.indices where scalars[index] == "," && startsField(scalars, at: index + 1)
    {
      fields.append(field(scalars[start..<index]))
      start = index + 1
    }
    fields.append(field(scalars[start...]))
    return fields.filter { !$0.isEmpty }
  }

  /// Whether a cookie name and `=` begin at `index`, after spaces and tabs.
  private static func startsField(_ scalars: [Unicode.Scalar], at index: Int) -> Bool {
    var position = index
    while position < scalars.count, scalars[position] == " " || scalars[position] == "\t" {
      position += 1
    }
    while position < scalars.count, isNameCharacter(scalars[position]) {
      position += 1
    }
    return position < scalars.count && scalars[position] == "="
  }

  /// Whether `scalar` may be part of a cookie's name: a visible character that is not a
  /// separator (RFC 9110 `token`).
  private static func isNameCharacter(_ scalar: Unicode.Scalar) -> Bool {
    scalar.value > 0x20 && scalar.value < 0x7F
      && !"()<>@,;:\\\"/[]?={}".unicodeScalars.contains(scalar)
  }

  private static func field(_ scalars: ArraySlice<Unicode.Scalar>) -> String {
    var text = String.UnicodeScalarView()
    text.append(contentsOf: scalars)
    return String(text).trimmingCharacters(in: CharacterSet(charactersIn: " \t,"))
  }
}
