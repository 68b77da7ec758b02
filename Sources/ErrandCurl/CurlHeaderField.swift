#if os(Linux)
  /// The text of a header line's name or value, as libcurl hands the line over in bytes.
  enum CurlHeaderField {
    /// The bytes as text, without the spaces and tabs around them: UTF-8, or, when they are not
    /// UTF-8 (obs-text, RFC 9110 §5.5, from a server written for Latin-1), one character per
    /// byte as ISO 8859-1, so that no byte becomes a replacement character.
    static func text(trimming bytes: Slice<UnsafeRawBufferPointer>) -> String {
      func isSpace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
      }
      var slice = bytes[...]
      while let first = slice.first, isSpace(first) { slice = slice.dropFirst() }
      while let last = slice.last, isSpace(last) { slice = slice.dropLast() }
      if slice.allSatisfy({ $0 < 0x80 }) {
        return String(decoding: slice, as: UTF8.self)
      }
      return String(validating: slice, as: UTF8.self)
        ?? String(slice.map { Character(Unicode.Scalar($0)) })
    }
  }
#endif
