import Foundation

extension HTTPHeaders {
  /// Why these headers cannot be sent, or `nil` when they can: a name must be an RFC 9110 token,
  /// and a value must not hold control characters other than tab (CR or LF would inject headers).
  var validationProblem: String? {
    for field in fields {
      if field.name.isEmpty || !field.name.everyByte(Self.isTokenByte) {
        return "the header name \"\(field.name.debugEscaped)\" is not a valid token."
      }
      if field.value.anyByte(Self.isForbiddenInValue),
        let bad = field.value.unicodeScalars.first(where: { $0.isForbiddenInHeaderValue })
      {
        return "the value of header \"\(field.name)\" contains \(bad.controlName); "
          + "header values must not contain control characters."
      }
    }
    return nil
  }

  /// Whether `value` can be sent as a header value: no control character but tab. A value read
  /// from a server (a validator, an event ID) that fails this is dropped, not sent back.
  package static func canSend(_ value: String) -> Bool {
    !value.anyByte(isForbiddenInValue)
  }

  /// Whether `byte` is a control character other than tab, which a header value must not hold.
  static func isForbiddenInValue(_ byte: UInt8) -> Bool {
    byte < 0x20 && byte != 0x09 || byte == 0x7F
  }

  /// RFC 9110 `tchar`: letters, digits and ``!#$%&'*+-.^_`|~``.
  ///
  /// Looked up in two 64-bit masks (bit `b` of the first for bytes below 64, bit `b - 64` of the
  /// second for the rest of ASCII): every header name and method of every request is checked
  /// with it, byte by byte. The test suite checks the masks against the list above.
  static func isTokenByte(_ byte: UInt8) -> Bool {
    if byte < 64 { return (0x03FF_6CFA_0000_0000 as UInt64) >> byte & 1 == 1 }
    if byte < 128 { return (0x57FF_FFFF_C7FF_FFFE as UInt64) >> (byte - 64) & 1 == 1 }
    return false
  }
}

extension Unicode.Scalar {
  /// Control characters other than tab, which a header value must not contain.
  fileprivate var isForbiddenInHeaderValue: Bool {
    (value < 0x20 && self != "\t") || value == 0x7F
  }

  /// A readable name, for example `a line feed (U+000A)`.
  fileprivate var controlName: String {
    let code = String(format: "U+%04X", value)
    switch self {
    case "\r": return "a carriage return (\(code))"
    case "\n": return "a line feed (\(code))"
    case "\0": return "a NUL character (\(code))"
    default: return "the control character \(code)"
    }
  }
}

extension String {
  /// Whether every UTF-8 byte of the string passes `test`, read from the string's own storage
  /// when it has contiguous storage (every native Swift string does): each header name and
  /// value of every request is checked, twice or more on its way to the wire.
  func everyByte(_ test: (UInt8) -> Bool) -> Bool {
    utf8.withContiguousStorageIfAvailable { $0.allSatisfy(test) } ?? utf8.allSatisfy(test)
  }

  /// Whether any UTF-8 byte of the string passes `test`, read as ``everyByte(_:)`` reads.
  func anyByte(_ test: (UInt8) -> Bool) -> Bool {
    utf8.withContiguousStorageIfAvailable { $0.contains(where: test) }
      ?? utf8.contains(where: test)
  }

  /// The string with control characters escaped, safe to put in a message.
  fileprivate var debugEscaped: String {
    String(debugDescription.dropFirst().dropLast())
  }
}

extension HTTPHeaders {
  /// The distinct lengths that `Content-Length` values announce, trimmed; more than one means a
  /// response whose end is a guess (and a wrong guess lets one response smuggle another).
  /// URLSession joins repeated fields into one value (`"5, 6"`), so each value is split at commas.
  /// - Parameter values: The `Content-Length` values, as received.
  /// - Returns: The distinct lengths.
  package static func announcedLengths(_ values: [String]) -> Set<String> {
    // The usual answer, one value of digits alone, needs no splitting or trimming (which goes
    // through Foundation's string bridging, a few microseconds on every response).
    if values.count == 1, let only = values.first, !only.isEmpty,
      only.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
    {
      return [only]
    }
    return Set(
      values.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) })
  }
}
