#if os(Linux)
  /// The text of a header line's name or value, as libcurl hands the line over in bytes.
  enum CurlHeaderField {
    /// The bytes as text, without the spaces and tabs around them.
    static func text(trimming bytes: Slice<UnsafeRawBufferPointer>) -> String {
      func isSpace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
      }
      var slice = bytes[...]
      while let first = slice.first, isSpace(first) { slice = slice.dropFirst() }
      while let last = slice.last, isSpace(last) { slice = slice.dropLast() }
      return String(decoding: slice, as: UTF8.self)
    }
  }
#endif
