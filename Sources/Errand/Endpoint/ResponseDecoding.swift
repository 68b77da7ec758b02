import Foundation

/// How an ``Endpoint`` turns a response into its value.
///
/// The endpoint initializers pick the strategy from the value type: JSON for `Decodable`,
/// ``empty`` for `Void`, the raw bytes for `Data` and the text for `String`. Pass `decoding:` to
/// choose another, such as ``envelope(_:decoder:)`` for bodies like `{"result": ...}` or a closure.
public struct ResponseDecoding<Value>: Sendable {
  /// The `Accept` header value that this strategy asks for, or `nil` to send none.
  public var accept: String?

  private let decode:
    @Sendable (_ response: HTTPResponse, _ defaultDecoder: JSONDecoder) throws -> Value

  private init(
    accept: String?,
    decode:
      @escaping @Sendable (_ response: HTTPResponse, _ defaultDecoder: JSONDecoder) throws -> Value
  ) {
    self.accept = accept
    self.decode = decode
  }

  /// A custom strategy: a closure that reads the whole response.
  /// - Parameters:
  ///   - accept: The `Accept` header value to send.
  ///   - decode: Produces the value, or throws to report a decoding failure.
  public init(
    accept: String? = "*/*",
    _ decode: @escaping @Sendable (_ response: HTTPResponse) throws -> Value
  ) {
    self.init(accept: accept) { response, _ in try decode(response) }
  }

  /// Decode a response.
  /// - Parameters:
  ///   - response: The response to read.
  ///   - defaultDecoder: The JSON decoder to use when the strategy has none of its own.
  /// - Returns: The value.
  /// - Throws: Whatever the strategy throws, typically a `DecodingError`.
  public func decode(_ response: HTTPResponse, defaultDecoder: JSONDecoder) throws -> Value {
    try decode(response, defaultDecoder)
  }
}

extension ResponseDecoding where Value: Decodable {
  /// Decode the body as JSON.
  ///
  /// An optional value type decodes to `nil` when the body is empty or the status is 204 or 205;
  /// any other type reports an empty body as a `DecodingError` that says so.
  /// - Parameter decoder: The decoder to use; `nil` uses the client's.
  /// - Returns: The strategy.
  public static func json(_ decoder: JSONDecoder? = nil) -> ResponseDecoding {
    ResponseDecoding(
      accept: "application/json", decode: JSONBodyDecoder<Value>(decoder: decoder).decode)
  }

  /// Decode JSON wrapped in an envelope object, such as `{"result": {...}}`, keeping the inside.
  ///
  /// Decoding errors give paths that start at the envelope key, for example `result.name`.
  /// - Parameters:
  ///   - key: The envelope's key that holds the value.
  ///   - decoder: The decoder to use; `nil` uses the client's.
  /// - Returns: The strategy.
  public static func envelope(_ key: String = "result", decoder: JSONDecoder? = nil)
    -> ResponseDecoding
  {
    ResponseDecoding(
      accept: "application/json",
      decode: JSONBodyDecoder<Value>(decoder: decoder, envelopeKey: key).decode)
  }
}

extension ResponseDecoding where Value == Void {
  /// Ignore the body, whatever it holds.
  public static var empty: ResponseDecoding {
    ResponseDecoding(accept: "*/*") { _, _ in () }
  }
}

extension ResponseDecoding where Value == Data {
  /// The body bytes as they arrived.
  public static var data: ResponseDecoding {
    ResponseDecoding(accept: "*/*") { response, _ in response.body }
  }
}

extension ResponseDecoding where Value == String {
  /// The body as UTF-8 text; a body that is not valid UTF-8 is a `DecodingError`.
  public static var string: ResponseDecoding {
    ResponseDecoding(accept: "*/*") { response, _ in
      guard let text = String(data: response.body, encoding: .utf8) else {
        throw DecodingError.dataCorrupted(
          DecodingError.Context(
            codingPath: [], debugDescription: "the response body is not valid UTF-8 text"))
      }
      return text
    }
  }
}

/// Decodes a JSON body, optionally from inside an envelope object.
///
/// A struct with a method, rather than a closure, so that the `@Sendable` strategy captures a
/// `Sendable` value instead of the `Value` metatype.
private struct JSONBodyDecoder<Value: Decodable>: Sendable {
  var decoder: JSONDecoder?
  var envelopeKey: String?

  func decode(_ response: HTTPResponse, defaultDecoder: JSONDecoder) throws -> Value {
    let noContent = response.body.isEmpty || [204, 205].contains(response.status)
    if noContent, let optional = Value.self as? any ExpressibleByNilLiteral.Type,
      let none = optional.init(nilLiteral: ()) as? Value
    {
      return none
    }
    if response.body.isEmpty {
      throw DecodingError.dataCorrupted(
        DecodingError.Context(
          codingPath: [],
          debugDescription: "the response body is empty; expected JSON for \(Value.self)"))
    }
    let decoder = decoder ?? defaultDecoder
    guard let envelopeKey else {
      return try decoder.decode(Value.self, from: response.body)
    }
    return try EnvelopeKey.$current.withValue(envelopeKey) {
      try decoder.decode(Envelope<Value>.self, from: response.body).value
    }
  }
}

/// The key that ``Envelope`` reads, bound for the duration of one decode.
enum EnvelopeKey {
  @TaskLocal static var current = "result"
}

/// A JSON object whose value under ``EnvelopeKey/current`` is the payload.
struct Envelope<Wrapped: Decodable>: Decodable {
  var value: Wrapped

  init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: AnyCodingKey.self)
    value = try container.decode(Wrapped.self, forKey: AnyCodingKey(EnvelopeKey.current))
  }
}

/// A coding key made from any string.
struct AnyCodingKey: CodingKey {
  var stringValue: String
  var intValue: Int? { nil }

  init(_ string: String) {
    stringValue = string
  }

  init?(stringValue: String) {
    self.init(stringValue)
  }

  init?(intValue: Int) {
    nil
  }
}
