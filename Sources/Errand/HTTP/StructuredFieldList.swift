import Foundation

/// A Structured Field List (RFC 9651, §3.1), parsed as §4.2 says: strictly, the whole field or
/// nothing. Used for fields whose definition says so, such as `RateLimit`.
struct StructuredFieldList: Equatable {
  /// A bare item (§3.3). Byte sequences, dates and display strings keep their text.
  enum BareItem: Equatable {
    case integer(Int)
    case decimal(Double)
    case string(String)
    case token(String)
    case bytes(String)
    case boolean(Bool)
    case date(Int)
    case displayString(String)
  }

  /// A member: an item, or an inner list (its items), with its parameters.
  struct Member: Equatable {
    /// The item's value; `nil` for an inner list.
    var item: BareItem?
    /// An inner list's items.
    var inner: [BareItem] = []
    /// The parameters by key; a key given twice keeps its last value (§4.2.3.2).
    var parameters: [String: BareItem] = [:]
  }

  var members: [Member]

  /// The list that `lines` (a field's lines, combined as §4.2 says) hold, or `nil` when it does
  /// not parse: then the whole field must be ignored.
  init?(lines: [String]) {
    var parser = Parser(Array(lines.joined(separator: ",").utf8))
    guard let members = parser.list() else { return nil }
    self.members = members
  }

  private struct Parser {
    let input: [UInt8]
    var index = 0

    init(_ input: [UInt8]) {
      self.input = input
    }

    var next: UInt8? { index < input.count ? input[index] : nil }

    mutating func skip(_ characters: Set<UInt8>) {
      while let next, characters.contains(next) { index += 1 }
    }

    static let space: UInt8 = 0x20
    static let ows: Set<UInt8> = [0x20, 0x09]

    /// §4.2.1.
    mutating func list() -> [Member]? {
      skip([Self.space])
      var members: [Member] = []
      while next != nil {
        guard let member = member() else { return nil }
        members.append(member)
        skip(Self.ows)
        guard let separator = next else { return members }
        guard separator == UInt8(ascii: ",") else { return nil }
        index += 1
        skip(Self.ows)
        // A trailing comma.
        if next == nil { return nil }
      }
      return members
    }

    mutating func member() -> Member? {
      var member = Member()
      if next == UInt8(ascii: "(") {
        index += 1
        while true {
          skip([Self.space])
          if next == UInt8(ascii: ")") {
            index += 1
            break
          }
          guard let item = bareItem() else { return nil }
          // Each inner item may carry parameters; they say nothing here.
          guard parameters() != nil else { return nil }
          member.inner.append(item)
          guard let after = next, after == Self.space || after == UInt8(ascii: ")") else {
            return nil
          }
        }
      } else {
        guard let item = bareItem() else { return nil }
        member.item = item
      }
      guard let parameters = parameters() else { return nil }
      member.parameters = parameters
      return member
    }

    /// §4.2.3.2.
    mutating func parameters() -> [String: BareItem]? {
      var parameters: [String: BareItem] = [:]
      while next == UInt8(ascii: ";") {
        index += 1
        skip([Self.space])
        guard let key = key() else { return nil }
        if next == UInt8(ascii: "=") {
          index += 1
          guard let value = bareItem() else { return nil }
          parameters[key] = value
        } else {
          parameters[key] = .boolean(true)
        }
      }
      return parameters
    }

    /// §4.2.3.3.
    mutating func key() -> String? {
      guard let first = next, first.isLowercaseLetter || first == UInt8(ascii: "*") else {
        return nil
      }
      let start = index
      while let next,
        next.isLowercaseLetter || next.isDigit || "_-.*".utf8.contains(next)
      {
        index += 1
      }
      return String(decoding: input[start..<index], as: UTF8.self)
    }

    /// §4.2.3.1.
    mutating func bareItem() -> BareItem? {
      guard let first = next else { return nil }
      switch first {
      case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
      case UInt8(ascii: "\""): return string().map(BareItem.string)
      case UInt8(ascii: ":"): return bytes()
      case UInt8(ascii: "?"):
        index += 1
        guard let value = next, value == UInt8(ascii: "0") || value == UInt8(ascii: "1") else {
          return nil
        }
        index += 1
        return .boolean(value == UInt8(ascii: "1"))
      case UInt8(ascii: "@"):
        index += 1
        guard case .integer(let seconds) = number() else { return nil }
        return .date(seconds)
      case UInt8(ascii: "%"):
        index += 1
        return string().map(BareItem.displayString)
      default:
        guard first.isLetter || first == UInt8(ascii: "*") else { return nil }
        return token()
      }
    }

    /// §4.2.4: at most 15 digits for an integer; 12 before and 1 to 3 after the point for a
    /// decimal. No `+`.
    mutating func number() -> BareItem? {
      let start = index
      if next == UInt8(ascii: "-") { index += 1 }
      var digits = 0
      var point: Int?
      while let next {
        if next.isDigit {
          digits += 1
        } else if next == UInt8(ascii: "."), point == nil {
          guard digits > 0, digits <= 12 else { return nil }
          point = digits
        } else {
          break
        }
        index += 1
        if point == nil, digits > 15 { return nil }
      }
      let text = String(decoding: input[start..<index], as: UTF8.self)
      guard digits > 0 else { return nil }
      if let point {
        let fraction = digits - point
        guard (1...3).contains(fraction), let value = Double(text) else { return nil }
        return .decimal(value)
      }
      return Int(text).map(BareItem.integer)
    }

    /// §4.2.5: printable ASCII, with `\"` and `\\` as the only escapes.
    mutating func string() -> String? {
      guard next == UInt8(ascii: "\"") else { return nil }
      index += 1
      var bytes: [UInt8] = []
      while let character = next {
        index += 1
        switch character {
        case UInt8(ascii: "\\"):
          guard let escaped = next, escaped == UInt8(ascii: "\"") || escaped == UInt8(ascii: "\\")
          else { return nil }
          bytes.append(escaped)
          index += 1
        case UInt8(ascii: "\""):
          return String(decoding: bytes, as: UTF8.self)
        case 0x20...0x7E:
          bytes.append(character)
        default:
          return nil
        }
      }
      return nil
    }

    /// §4.2.6.
    mutating func token() -> BareItem? {
      let start = index
      index += 1
      while let next, next.isTokenCharacter { index += 1 }
      return .token(String(decoding: input[start..<index], as: UTF8.self))
    }

    /// §4.2.7.
    mutating func bytes() -> BareItem? {
      index += 1
      let start = index
      while let next, next != UInt8(ascii: ":") {
        guard next.isLetter || next.isDigit || "+/=".utf8.contains(next) else { return nil }
        index += 1
      }
      guard next == UInt8(ascii: ":") else { return nil }
      defer { index += 1 }
      return .bytes(String(decoding: input[start..<index], as: UTF8.self))
    }
  }
}

extension UInt8 {
  fileprivate var isDigit: Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) }
  fileprivate var isLowercaseLetter: Bool {
    (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(self)
  }
  fileprivate var isLetter: Bool {
    isLowercaseLetter || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(self)
  }
  /// `tchar` (RFC 9110, §5.6.2), `:` or `/`.
  fileprivate var isTokenCharacter: Bool {
    isLetter || isDigit || "!#$%&'*+-.^_`|~:/".utf8.contains(self)
  }
}
