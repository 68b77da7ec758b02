import Foundation

/// The body of an ``Endpoint``'s request and how to encode it.
///
/// Bodies are encoded when ``APIClient/makeRequest(for:)`` runs, so an encoding failure becomes an
/// ``APIError/invalidRequest(_:)`` that names the endpoint, never a crash.
///
/// ```swift
/// .json(Dog(name: "Rex"))                          // application/json, client encoder
/// .form([("name", "Rex"), ("age", "3")])           // application/x-www-form-urlencoded
/// .data(png, contentType: "image/png")
/// .multipart(MultipartForm(parts: [.field("name", "Rex"), .file("photo", filename: "rex.png",
///                                   contentType: "image/png", data: png)]))
/// ```
public struct RequestBody: Sendable {
  /// The bytes and their content type.
  struct Encoded: Equatable {
    var data: Data
    var contentType: String
    /// A file whose contents are the body, streamed from disk; `data` is then empty.
    var file: URL? = nil
  }

  private let encode: @Sendable (_ defaultEncoder: JSONEncoder) throws -> Encoded

  private init(_ encode: @escaping @Sendable (_ defaultEncoder: JSONEncoder) throws -> Encoded) {
    self.encode = encode
  }

  /// Encode the body, using `defaultEncoder` for JSON unless the body has its own encoder.
  func encoded(with defaultEncoder: JSONEncoder) throws -> Encoded {
    try encode(defaultEncoder)
  }

  /// A JSON body, sent as `application/json`.
  /// - Parameters:
  ///   - value: The value to encode.
  ///   - encoder: The encoder to use; `nil` uses the client's.
  /// - Returns: The body.
  public static func json<Value: Encodable & Sendable>(
    _ value: Value, encoder: JSONEncoder? = nil
  ) -> RequestBody {
    RequestBody { defaultEncoder in
      Encoded(
        data: try (encoder ?? defaultEncoder).encode(value), contentType: "application/json")
    }
  }

  /// A form body, sent as `application/x-www-form-urlencoded` (spaces as `+`, everything but
  /// letters, digits and `*-._` percent-encoded as UTF-8).
  /// - Parameter fields: Name and value pairs, in order; names may repeat.
  /// - Returns: The body.
  public static func form(_ fields: [(String, String)]) -> RequestBody {
    let text = fields.map { "\(formEncode($0.0))=\(formEncode($0.1))" }.joined(separator: "&")
    let data = Data(text.utf8)
    return RequestBody { _ in
      Encoded(data: data, contentType: "application/x-www-form-urlencoded")
    }
  }

  /// Raw bytes with a content type of your choice.
  /// - Parameters:
  ///   - data: The bytes to send.
  ///   - contentType: The `Content-Type` header value.
  /// - Returns: The body.
  public static func data(_ data: Data, contentType: String = "application/octet-stream")
    -> RequestBody
  {
    RequestBody { _ in Encoded(data: data, contentType: contentType) }
  }

  /// A file's contents, streamed from disk as the request is sent, so a large upload is never
  /// loaded into memory (by `URLSessionTransport` and `CurlTransport`; test doubles read the file).
  ///
  /// ```swift
  /// Endpoint<Receipt>(method: .post, path: "logs", body: .file(bundleURL, contentType: "application/zip"))
  /// ```
  /// Building the request fails with ``APIError/invalidRequest(_:)`` when the file does not exist
  /// or is not a regular file: a named pipe, a device such as `/dev/zero` or a folder is refused
  /// before anything is opened (a pipe would block, a device never end), and every transport
  /// checks again before it sends.
  /// - Parameters:
  ///   - url: The file.
  ///   - contentType: The `Content-Type` to send.
  /// - Returns: The body.
  public static func file(_ url: URL, contentType: String = "application/octet-stream")
    -> RequestBody
  {
    RequestBody { _ in
      if let problem = HTTPRequest.bodyFileProblem(url) {
        throw APIError.invalidRequest(problem)
      }
      return Encoded(data: Data(), contentType: contentType, file: url)
    }
  }

  /// A `multipart/form-data` body of fields and files.
  /// - Parameter form: The parts and their boundary.
  /// - Returns: The body.
  public static func multipart(_ form: MultipartForm) -> RequestBody {
    RequestBody { _ in Encoded(data: try form.encoded(), contentType: form.contentType) }
  }

  /// Encode a form name or value as the URL Standard's application/x-www-form-urlencoded does:
  /// spaces pass the encoder and become `+`; everything but letters, digits and `*-._` is
  /// percent-encoded.
  static func formEncode(_ string: String) -> String {
    PercentEncoding.encode(string, allowing: PercentEncoding.formComponent)
      .replacingOccurrences(of: " ", with: "+")
  }
}
