extension DecodingError {
  /// The failure with the path where it happened, for example
  /// `dogs[3].name: expected String, found a number`.
  var pathDescription: String {
    switch self {
    case .typeMismatch(let type, let context):
      return "\(context.codingPath.pathString): expected \(type) (\(context.debugDescription))"
    case .valueNotFound(let type, let context):
      return "\(context.codingPath.pathString): expected \(type), found null"
    case .keyNotFound(let key, let context):
      let path = (context.codingPath + [key]).pathString
      return "\(path): missing key \"\(key.stringValue)\""
    case .dataCorrupted(let context):
      return "\(context.codingPath.pathString): \(context.debugDescription)"
    @unknown default:
      return String(describing: self)
    }
  }
}

extension EncodingError {
  /// The failure with the path where it happened, for example `[0]: Unable to encode Double.nan`.
  var pathDescription: String {
    switch self {
    case .invalidValue(_, let context):
      return "\(context.codingPath.pathString): \(context.debugDescription)"
    @unknown default:
      return String(describing: self)
    }
  }
}

extension [any CodingKey] {
  /// A coding path as `dogs[3].name`, or `body` for the top level.
  var pathString: String {
    var text = ""
    for key in self {
      if let index = key.intValue {
        text += "[\(index)]"
      } else {
        text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
      }
    }
    return text.isEmpty ? "body" : text
  }
}
